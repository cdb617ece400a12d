#pragma once
// Kept for earlier code: gpt2::from_pretrained lives in models/gpt2/architecture.hpp.
#include "models/gpt2/architecture.hpp"
