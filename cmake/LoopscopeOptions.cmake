# One place for the language level, warnings and Qt defines: every target links loopscope_options.
add_library(loopscope_options INTERFACE)
add_library(loopscope::options ALIAS loopscope_options)
target_compile_features(loopscope_options INTERFACE cxx_std_20)
target_compile_options(loopscope_options INTERFACE -Wall -Wextra -Wpedantic)
if(LOOPSCOPE_WERROR)
    target_compile_options(loopscope_options INTERFACE -Werror)
endif()
target_compile_definitions(loopscope_options INTERFACE
    QT_NO_CAST_FROM_ASCII
    QT_NO_CAST_TO_ASCII
    QT_NO_URL_CAST_FROM_STRING
    QT_NO_NARROWING_CONVERSIONS_IN_CONNECT
    QT_USE_QSTRINGBUILDER
    QT_NO_FOREACH)
if(LOOPSCOPE_SANITIZE)
    target_compile_options(loopscope_options INTERFACE -fsanitize=${LOOPSCOPE_SANITIZE} -fno-omit-frame-pointer)
    target_link_options(loopscope_options INTERFACE -fsanitize=${LOOPSCOPE_SANITIZE})
endif()
