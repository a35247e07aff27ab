# Fails when clang-format (the repository's .clang-format) would change a C++ source file.
# Fix with: git ls-files '*.cpp' '*.h' | xargs clang-format -i
file(GLOB_RECURSE sources ${ROOT}/apps/*.cpp ${ROOT}/apps/*.h ${ROOT}/model/*.cpp ${ROOT}/model/*.h
     ${ROOT}/runtime/*.cpp ${ROOT}/runtime/*.h ${ROOT}/shaders/*.h ${ROOT}/tests/*.cpp ${ROOT}/tests/*.h)
execute_process(COMMAND ${CLANG_FORMAT} --dry-run --Werror ${sources} RESULT_VARIABLE rc ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  string(REGEX MATCHALL "[^\n]*error: code should be clang-formatted[^\n]*" lines "${out}")
  list(JOIN lines "\n" lines)
  message(FATAL_ERROR "files not formatted (git ls-files '*.cpp' '*.h' | xargs clang-format -i):\n${lines}")
endif()
