#pragma once
// Kept for earlier code: bert::from_pretrained lives in models/bert/architecture.hpp.
#include "models/bert/architecture.hpp"
