// quote: text in double quotes with its special characters escaped, as error messages and
// the text forms print names (include/minic/support/token_cursor.h). Course module 1.
//
// Chapter: docs/module1-overview.md#support-code-srcsupport
#include "minic/support/token_cursor.h"

namespace minic {

std::string quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace minic
