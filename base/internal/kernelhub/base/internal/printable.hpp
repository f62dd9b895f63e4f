// printable: text from elsewhere (a Hub's names, a server's answer) as it is safe to print on a
// terminal. A name with an escape sequence in it would otherwise move the cursor, recolour or
// rewrite what the user reads, or set the window title, when we print it.
//
// Kept: printable ASCII, newline and tab (a message's lines; a name's are escaped), and every well-formed UTF-8
// character but the C1 controls. Shown as escapes: the other C0 controls and DEL (`\x1b`), the C1
// controls U+0080..U+009F (`\u009b`: CSI to a terminal that reads them), and each byte that is no
// part of well-formed UTF-8 (`\xff`). hub_names' messages quote a refused name the same way.
//
// Thread safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace kernelhub {

enum class Lines {
  kKept,     // a message: its newlines and tabs stay
  kEscaped,  // a name: one line, whatever it holds (`\x0a`)
};

std::string printable(std::string_view text, Lines lines = Lines::kKept);

}  // namespace kernelhub
