# glad2: the OpenGL 4.3 core loader shared by gpu/ and app/ (target `glad`), generated at
# build time by Debian's python3-glad. --reproducible keeps it offline (no XML download);
# /usr/bin/glad, not the glad of whatever python3 is first on PATH.
find_program(GLAD_EXE glad PATHS /usr/bin NO_DEFAULT_PATH REQUIRED)
set(GLAD_OUT ${CMAKE_BINARY_DIR}/glad)
add_custom_command(
  OUTPUT ${GLAD_OUT}/src/gl.c ${GLAD_OUT}/include/glad/gl.h
  COMMAND ${GLAD_EXE} --quiet --reproducible --api gl:core=4.3 --extensions "" --out-path ${GLAD_OUT} c
  COMMENT "glad2: OpenGL 4.3 core loader" VERBATIM)
add_library(glad STATIC ${GLAD_OUT}/src/gl.c)
target_include_directories(glad PUBLIC ${GLAD_OUT}/include)
target_link_libraries(glad PUBLIC ${CMAKE_DL_LIBS})
set_target_properties(glad PROPERTIES POSITION_INDEPENDENT_CODE ON)
