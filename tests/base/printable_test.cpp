// printable: what a name from a Hub looks like on a terminal. Escape sequences (C0 and C1) must not
// reach it; text in any script must stay readable.
#include <catch2/catch.hpp>

#include "kernelhub/base/internal/printable.hpp"

using namespace kernelhub;

TEST_CASE("printable escapes what a terminal would act on, and keeps text") {
  // ESC [ 3 1 m (colour), BEL, a DEL, and OSC (set the window title) ending in BEL.
  CHECK(printable("acme/\x1b[31mred\x07\x7f") == "acme/\\x1b[31mred\\x07\\x7f");
  CHECK(printable("\x1b]0;pwned\x07") == "\\x1b]0;pwned\\x07");
  // C1 controls written in UTF-8 (U+009B is CSI to a terminal that reads C1) and as lone bytes.
  CHECK(printable("a\xc2\x9b"
                  "31mb") == "a\\u009b31mb");
  CHECK(printable("a\x9b"
                  "31mb\xff") == "a\\x9b31mb\\xff");
  // Overlong and surrogate encodings are no characters.
  CHECK(printable("\xc0\xaf\xed\xa0\x80") == "\\xc0\\xaf\\xed\\xa0\\x80");
  // Letters of every script, symbols and emoji stay; so do a message's lines.
  CHECK(printable("Größe ✅ 中文 \xf0\x9f\x99\x82") == "Größe ✅ 中文 \xf0\x9f\x99\x82");
  CHECK(printable("line one\n\tline two") == "line one\n\tline two");
  CHECK(printable("no\nnewline\tin a name", Lines::kEscaped) == "no\\x0anewline\\x09in a name");
  CHECK(printable(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(printable("") == "");
}
