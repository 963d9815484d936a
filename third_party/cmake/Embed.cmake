# cmake -DIN=file -DOUT=file.cpp -DNAME=id -P Embed.cmake
# Writes a C++ source defining handoff::shaders::entry_<NAME> with the file's bytes.
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR bytes "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
file(WRITE ${OUT} "// generated from ${IN}\n#include <handoff/shaders.hpp>\nnamespace handoff::shaders {\nalignas(4) static const unsigned char data_${NAME}[] = {${body} 0};\nextern const Entry entry_${NAME};\nconst Entry entry_${NAME}{\"${NAME}\", data_${NAME}, ${bytes}};\n}\n")
