// The translation unit that builds the precompiled header (cmake/LoopscopePrecompiled.cmake).
