// stb_image compiled into the image fuzz target with the fuzzer's coverage and sanitizers (the
// shipped vkllm links Debian's libstb instead).
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_JPEG
#define STBI_ONLY_PNG
#define STBI_ONLY_GIF
#define STBI_ONLY_BMP
#include <stb_image.h>
