// What the compile checks share: a block and the headers a model file includes.
#pragma once
#include "remat/checkpoint.hpp"
#include "remat/layers.hpp"
#include "remat/tree/model.hpp"
#include "remat/tree/show.hpp"

using namespace remat;

struct Block {
    BOOST_HANA_DEFINE_STRUCT(Block, (nn::LayerNorm, ln), (nn::Linear, fc));
    static constexpr bool is_block = true;
    Var operator()(const Var& x) const { return x + fc(ln(x)); }
};
