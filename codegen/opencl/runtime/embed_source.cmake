# Writes OUTPUT, a C source defining `const char SYMBOL[]` with the bytes of SOURCE and a
# terminating NUL. Usage: cmake -DSOURCE=in.cl -DOUTPUT=out.c -DSYMBOL=name -P embed_source.cmake
file(READ ${SOURCE} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# Break the initializer into lines of 16 bytes so compilers and editors cope with big kernels.
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n  " bytes "${bytes}")
get_filename_component(name ${SOURCE} NAME)
file(WRITE ${OUTPUT} "/* ${name}, embedded by embed_source.cmake at build time; do not edit. */\n"
                     "const char ${SYMBOL}[] = {\n  ${bytes}0};\n")
