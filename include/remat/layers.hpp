#pragma once
// Every layer.
#include "remat/layers/activation.hpp"
#include "remat/layers/attention.hpp"
#include "remat/layers/chain.hpp"
#include "remat/layers/chain_from.hpp"
#include "remat/layers/dropout.hpp"
#include "remat/layers/embedding.hpp"
#include "remat/layers/generators.hpp"
#include "remat/layers/init.hpp"
#include "remat/layers/linear.hpp"
#include "remat/layers/lora.hpp"
#include "remat/layers/modes.hpp"
#include "remat/layers/norm.hpp"
#include "remat/tree/model.hpp"  // REMAT_MODEL
