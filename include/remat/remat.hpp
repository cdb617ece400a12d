#pragma once
// Everything public in remat.
#include "remat/ad/backend.hpp"
#include "remat/ad/finite_difference.hpp"
#include "remat/ad/tape.hpp"
#include "remat/core/error.hpp"
#include "remat/core/memory.hpp"
#include "remat/core/random.hpp"
#include "remat/core/tensor.hpp"
#include "remat/ops.hpp"
