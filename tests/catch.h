// Catch2: Debian 12 ships v2 (catch2/catch.hpp); v3 splits the headers. Tests use the common subset.
#pragma once
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif
