#pragma once
// The dist tests' one World, made by world_test.cpp's main before any test case runs.
#include "remat/dist/world.hpp"

namespace remat::test {
const dist::World& world();
}  // namespace remat::test
