// libFuzzer target: the safetensors reader (header length, JSON header, entries, layout) and every
// read of a tensor it accepts. Any exception other than remat's typed ones is a finding, as is any
// sanitizer report. Seeds: corpus/safetensors/ (tests/fuzz/make_seeds.py).
#include <cstddef>
#include <cstdint>

#include "remat/hf/safetensors.hpp"
#include "tests/fuzz/memory_file.hpp"

using namespace remat;

namespace {
bool is_float(hf::DType d) { return d == hf::DType::F32 || d == hf::DType::F16 || d == hf::DType::BF16 || d == hf::DType::F64; }
bool is_int(hf::DType d) {
    return d == hf::DType::I64 || d == hf::DType::I32 || d == hf::DType::I16 || d == hf::DType::I8 || d == hf::DType::U32 ||
           d == hf::DType::U16 || d == hf::DType::U8;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static fuzz::MemoryFile file;
    try {
        const auto f = hf::SafetensorsFile::open(file.hold(data, size));
        std::size_t total = 0;
        for (const hf::TensorInfo& t : f.tensors()) {
            if (f.find(t.name) != &t) __builtin_trap();  // names are unique, find() must agree
            total += f.bytes(t).size();
            if (is_float(t.dtype)) {
                const Tensor x = f.read_float(t);
                if (x.size() * hf::size_of(t.dtype) != t.end - t.begin) __builtin_trap();
            } else if (is_int(t.dtype)) {
                const IdTensor x = f.read_int(t);
                if (x.size() * hf::size_of(t.dtype) != t.end - t.begin) __builtin_trap();
            }
            try {  // the wrong reader must refuse by name, never reinterpret
                if (is_float(t.dtype))
                    (void)f.read_int(t);
                else
                    (void)f.read_float(t);
                __builtin_trap();
            } catch (const hf::FormatError&) {
            }
        }
        if (total + 8 > size) __builtin_trap();  // the tensors tile the data section, within the file
    } catch (const hf::FormatError&) {
    }
    return 0;
}
