# `cmake --install`: the layout a user gets.
#   bin/memloupe
#   <libdir>/memloupe/   the companions memloupe finds at run time beside itself
#                        (src/cli/companion.h): the preload and attach libraries,
#                        the replayer
#   include/memloupe/memloupe.h
#   share/man/man1/memloupe.1   generated from the commands' --help (cmake/man_page.cmake)
#   share/bash-completion/completions/memloupe, share/zsh/site-functions/_memloupe
include(GNUInstallDirs)
set(MEMLOUPE_INSTALL_COMPANION_DIR ${CMAKE_INSTALL_LIBDIR}/memloupe)
# The CLI looks for its companions relative to its own path.
file(RELATIVE_PATH MEMLOUPE_COMPANION_RELDIR
     ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR} ${CMAKE_INSTALL_PREFIX}/${MEMLOUPE_INSTALL_COMPANION_DIR})
target_compile_definitions(memloupe PRIVATE MEMLOUPE_COMPANION_RELDIR="${MEMLOUPE_COMPANION_RELDIR}")

install(TARGETS memloupe RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS memloupe_preload memloupe_attach memloupe-replayer
        LIBRARY DESTINATION ${MEMLOUPE_INSTALL_COMPANION_DIR}
        RUNTIME DESTINATION ${MEMLOUPE_INSTALL_COMPANION_DIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/memloupe/memloupe.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/memloupe)

# The man page: built from the built CLI's own --help texts, so it cannot drift.
set(MEMLOUPE_MAN_PAGE ${PROJECT_BINARY_DIR}/man/memloupe.1)
add_custom_command(OUTPUT ${MEMLOUPE_MAN_PAGE}
  COMMAND ${CMAKE_COMMAND} -DMEMLOUPE=$<TARGET_FILE:memloupe> -DOUTPUT=${MEMLOUPE_MAN_PAGE}
          -DVERSION=${PROJECT_VERSION} -P ${PROJECT_SOURCE_DIR}/cmake/man_page.cmake
  DEPENDS memloupe ${PROJECT_SOURCE_DIR}/cmake/man_page.cmake
  COMMENT "Generating the man page memloupe.1")
add_custom_target(memloupe_man ALL DEPENDS ${MEMLOUPE_MAN_PAGE})
install(FILES ${MEMLOUPE_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

install(FILES ${PROJECT_SOURCE_DIR}/scripts/completion/memloupe.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME memloupe)
install(FILES ${PROJECT_SOURCE_DIR}/scripts/completion/_memloupe
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
