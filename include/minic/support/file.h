// Reading and writing whole files, with errors that name the file. Course module 1.
//
// Chapter: docs/module1-overview.md#support-code-srcsupport
#pragma once

#include <string>

namespace minic {

// The bytes of the file at `path`. Throws Error ("<path>: no such file", "... is a
// directory", ...) if it cannot be read.
std::string read_file(const std::string& path);

// Writes `text` to the file at `path`, replacing it. Throws Error naming the file if it
// cannot be written.
void write_file(const std::string& path, const std::string& text);

}  // namespace minic
