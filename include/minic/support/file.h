// Reading whole files, with errors that name the file.
#pragma once

#include <string>

namespace minic {

// The bytes of the file at `path`. Throws Error ("<path>: no such file", "... is a
// directory", ...) if it cannot be read.
std::string read_file(const std::string& path);

}  // namespace minic
