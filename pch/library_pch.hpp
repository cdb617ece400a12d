// Precompiled for every source of the library and of the unit tests (meson's cpp_pch): the external
// headers most of them parse, which took about a third of a library source's compile time. Only third-party and standard headers here,
// so that a change to remat's own headers rebuilds only the sources that include them.
#ifndef XTENSOR_USE_XSIMD
#define XTENSOR_USE_XSIMD  // as remat/core/tensor.hpp sets it
#endif
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/hana/define_struct.hpp>
#include <nlohmann/json.hpp>
#include <xtensor/xarray.hpp>
