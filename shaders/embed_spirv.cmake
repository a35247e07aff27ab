# Turns a SPIR-V binary into a C++ header: `static const uint32_t spirv_<NAME>[] = {...};`
file(READ ${SPV} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR words "${n} / 8")
# SPIR-V words are little-endian in the file: reverse the four bytes of each word.
string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1," body "${hex}")
string(REGEX REPLACE "((0x........,){12})" "\\1\n" body "${body}")
file(WRITE ${HDR} "// Generated from ${NAME}.comp; do not edit.\n#include <cstdint>\nstatic const uint32_t spirv_${NAME}[${words}] = {\n${body}};\n")
