# What `loopscope` installs and the Debian package CPack makes of it (scripts/package builds
# it, scripts/test checks it). Layout under the prefix (/usr in the package):
#   bin/loopscope                                   the app (window and --headless)
#   lib/<triplet>/loopscope/_loopscope_zygote.abi3.so  the sandbox zygote's C extension
#   share/applications/<app id>.desktop             the application menu's entry
#   share/metainfo/<app id>.metainfo.xml            AppStream (software centres)
#   share/icons/hicolor/{48x48,128x128,256x256,scalable}/apps/<app id>.{png,svg}
#   share/man/man1/loopscope.1.gz                   generated from `loopscope --help` (help2man)
#   share/doc/loopscope/{copyright,changelog.gz}
# The sandbox's Python (resources/*.py) is compiled into the binary, so nothing else is needed.
if(NOT TARGET loopscope_window)
    return() # only the app with its window is installed
endif()

set(packaging "${PROJECT_SOURCE_DIR}/resources/packaging")
set(generated "${PROJECT_BINARY_DIR}/packaging")
set(LOOPSCOPE_PACKAGE_MAINTAINER
    "Loopscope maintainers <maintainers@users.noreply.a-seed-1b2e0f17.example>"
    CACHE STRING "The Maintainer field of the .deb and of its changelog entry")
set(CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
# `cmake --install`/cpack do not build `all` (the tests): scripts/package builds what ships.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

install(TARGETS loopscope RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(TARGETS loopscope_zygote_module LIBRARY DESTINATION "${LOOPSCOPE_PRIVATE_LIBDIR}"
        PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ) # loaded, never run
install(FILES "${packaging}/${LOOPSCOPE_APP_ID}.desktop"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/applications")
configure_file("${packaging}/${LOOPSCOPE_APP_ID}.metainfo.xml.in"
               "${generated}/${LOOPSCOPE_APP_ID}.metainfo.xml" @ONLY)
install(FILES "${generated}/${LOOPSCOPE_APP_ID}.metainfo.xml"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/metainfo")
install(FILES "${packaging}/${LOOPSCOPE_APP_ID}.svg"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps")
install(FILES "${packaging}/copyright" DESTINATION "${CMAKE_INSTALL_DOCDIR}")

# Generated at build time, each by the Debian tool made for it (librsvg2-bin, help2man, gzip;
# scripts/install-deps installs them). Without them the tree builds, but installs no icons or
# man page (scripts/test's package check fails on that).
find_program(LOOPSCOPE_RSVG_CONVERT rsvg-convert)
find_program(LOOPSCOPE_HELP2MAN help2man)
find_program(LOOPSCOPE_GZIP gzip)
set(assets "")
if(LOOPSCOPE_RSVG_CONVERT)
    foreach(size 48 128 256)
        set(png "${generated}/icons/${size}x${size}/${LOOPSCOPE_APP_ID}.png")
        add_custom_command(OUTPUT "${png}"
            COMMAND "${LOOPSCOPE_RSVG_CONVERT}" -w ${size} -h ${size}
                    -o "${png}" "${packaging}/${LOOPSCOPE_APP_ID}.svg"
            DEPENDS "${packaging}/${LOOPSCOPE_APP_ID}.svg"
            COMMENT "Icon ${size}x${size} (rsvg-convert)" VERBATIM)
        install(FILES "${png}"
                DESTINATION "${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps")
        list(APPEND assets "${png}")
    endforeach()
else()
    message(STATUS "rsvg-convert not found (librsvg2-bin): no PNG icons installed")
endif()
if(LOOPSCOPE_GZIP)
    # The changelog entry of this version, for the package's /usr/share/doc.
    execute_process(COMMAND date -u -R -d "${LOOPSCOPE_RELEASE_DATE}"
                    OUTPUT_VARIABLE LOOPSCOPE_RELEASE_DATE_RFC2822 OUTPUT_STRIP_TRAILING_WHITESPACE
                    COMMAND_ERROR_IS_FATAL ANY)
    configure_file("${packaging}/changelog.in" "${generated}/changelog" @ONLY)
    add_custom_command(OUTPUT "${generated}/changelog.gz"
        COMMAND "${LOOPSCOPE_GZIP}" -9nf -k "${generated}/changelog"
        DEPENDS "${generated}/changelog" VERBATIM)
    install(FILES "${generated}/changelog.gz" DESTINATION "${CMAKE_INSTALL_DOCDIR}")
    list(APPEND assets "${generated}/changelog.gz")
endif()
if(LOOPSCOPE_HELP2MAN AND LOOPSCOPE_GZIP)
    # help2man runs `loopscope --help` and `--version`; found on PATH so the page says
    # "loopscope", not the build path.
    add_custom_command(OUTPUT "${generated}/loopscope.1.gz"
        COMMAND "${CMAKE_COMMAND}" -E env "PATH=$<TARGET_FILE_DIR:loopscope>:$ENV{PATH}"
                "${LOOPSCOPE_HELP2MAN}" --no-info --no-discard-stderr
                "--name=local OpenAI-compatible proxy and live inspector for agent loops"
                --output "${generated}/loopscope.1" loopscope
        COMMAND "${LOOPSCOPE_GZIP}" -9nf "${generated}/loopscope.1"
        DEPENDS loopscope COMMENT "Man page from loopscope --help (help2man)" VERBATIM)
    install(FILES "${generated}/loopscope.1.gz" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1")
    list(APPEND assets "${generated}/loopscope.1.gz")
else()
    message(STATUS "help2man or gzip not found: no man page installed")
endif()
add_custom_target(loopscope_install_assets ALL DEPENDS ${assets})

# The .deb: CPack's DEB generator, dependencies from dpkg-shlibdeps plus what the binary runs
# or loads at run time without linking it.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME loopscope)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "${LOOPSCOPE_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "local LLM proxy and live debugger for agent loops")
set(CPACK_PACKAGE_DESCRIPTION [=[
Loopscope is a local OpenAI-compatible proxy and a live inspector for
agentic code-execution loops. A request that declares the hosted
code_interpreter tool has its code run as real Python in a local
bubblewrap sandbox, and the answer comes back in OpenAI's shape,
streaming included. The window shows every request, each loop
iteration, the code and its output, and the sandbox sessions. A
built-in demo model answers without an API key or network.]=])
set(CPACK_PACKAGE_DIRECTORY "${PROJECT_BINARY_DIR}/package")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # loopscope_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The sandbox (bubblewrap, python3 and the data-analysis modules OpenAI's sandbox offers), and
# Qt's SQLite driver, a plugin the flow history loads.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "bubblewrap, python3, python3-numpy, python3-pandas, \
python3-matplotlib, python3-pil, libqt6sql6-sqlite")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
include(CPack)
