// Placeholder: the conformance runner is being written.
int main() { return 0; }
