# cmake -DINPUT=<file> -DOUTPUT=<header> -DNAME=<array> -P embed_file.cmake
# Writes the bytes of INPUT as `inline constexpr unsigned char NAME[] = {...};`.
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUTPUT}.tmp" "// Generated from ${INPUT}; do not edit.\n#pragma once\ninline constexpr unsigned char ${NAME}[] = {${bytes}};\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
