# Precompiled Qt Core headers, parsed once per tree and reused by every target (issue 35: a
# cold build on 2 cores spent about half its time re-reading the same Qt headers).
#
# One header, cmake/pch/loopscope_pch.h, is precompiled by `loopscope_pch` with the flags every
# target shares (loopscope_options, Qt6::Core); loopscope_use_precompiled_headers() then points
# each target of the tree that links loopscope_options at it (REUSE_FROM). GCC accepts a
# precompiled header only when the macros defined at its creation are defined the same way in
# the user, so it is built with Qt Core's defines alone (every target has those; extra ones such
# as QT_WIDGETS_LIB are fine) and holds no header whose meaning depends on a module macro
# (QtTest's QTEST_MAIN does, so it is not in it). -Winvalid-pch with -Werror turns any mismatch
# into a build error instead of a silent slow path. Sources that `#undef QT_NO_CAST_FROM_ASCII`
# before their includes (test fixtures written as literals), and targets that drop it with
# -UQT_NO_CAST_FROM_ASCII, must see Qt's headers without that define, so they do without it.
option(LOOPSCOPE_PCH "Precompile the Qt Core headers once and reuse them in every target" ON)

if(LOOPSCOPE_PCH)
    add_library(loopscope_pch STATIC "${PROJECT_SOURCE_DIR}/cmake/pch/loopscope_pch.cpp")
    target_link_libraries(loopscope_pch PRIVATE loopscope_options Qt6::Core)
    set_target_properties(loopscope_pch PROPERTIES AUTOMOC OFF)
    target_precompile_headers(loopscope_pch PRIVATE "${PROJECT_SOURCE_DIR}/cmake/pch/loopscope_pch.h")
    target_compile_options(loopscope_pch PRIVATE -Winvalid-pch)
endif()

function(loopscope_collect_targets dir out)
    get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
    get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
    foreach(sub IN LISTS subdirs)
        loopscope_collect_targets("${sub}" more)
        list(APPEND targets ${more})
    endforeach()
    set(${out} ${targets} PARENT_SCOPE)
endfunction()

# Called once at the end of the top-level CMakeLists.txt, when every target exists.
function(loopscope_use_precompiled_headers)
    if(NOT LOOPSCOPE_PCH)
        return()
    endif()
    loopscope_collect_targets("${PROJECT_SOURCE_DIR}" targets)
    foreach(target IN LISTS targets)
        get_target_property(type ${target} TYPE)
        if(target STREQUAL "loopscope_pch" OR NOT type MATCHES "^(STATIC_LIBRARY|EXECUTABLE)$")
            continue()
        endif()
        get_target_property(libs ${target} LINK_LIBRARIES)
        if(NOT "loopscope_options" IN_LIST libs)
            continue() # generated protobuf code and the like: not our flags
        endif()
        get_target_property(options ${target} COMPILE_OPTIONS)
        if("-UQT_NO_CAST_FROM_ASCII" IN_LIST options)
            continue() # the whole target undoes a define the precompiled header was built with
        endif()
        target_precompile_headers(${target} REUSE_FROM loopscope_pch)
        target_compile_options(${target} PRIVATE -Winvalid-pch)
        get_target_property(sources ${target} SOURCES)
        get_target_property(source_dir ${target} SOURCE_DIR)
        foreach(source IN LISTS sources)
            if(NOT source MATCHES "\\.cpp$")
                continue()
            endif()
            cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY "${source_dir}" OUTPUT_VARIABLE path)
            if(EXISTS "${path}")
                file(STRINGS "${path}" undefines REGEX "^#undef QT_NO_CAST_FROM_ASCII")
                if(undefines)
                    set_source_files_properties("${path}" TARGET_DIRECTORY ${target}
                                                PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
                endif()
            endif()
        endforeach()
    endforeach()
endfunction()
