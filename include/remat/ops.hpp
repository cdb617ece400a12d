#pragma once
// Every differentiable op.
#include "remat/ops/activation.hpp"
#include "remat/ops/attention.hpp"
#include "remat/ops/dropout.hpp"
#include "remat/ops/elementwise.hpp"
#include "remat/ops/embedding.hpp"
#include "remat/ops/linalg.hpp"
#include "remat/ops/loss.hpp"
#include "remat/ops/norm.hpp"
#include "remat/ops/reduce.hpp"
#include "remat/ops/shape.hpp"
#include "remat/ops/softmax.hpp"
#include "remat/ops/threads.hpp"
