#include "zip_archive.hpp"

#include "remat/hf/error.hpp"

namespace remat::hf::detail {

std::string zip_message(int code) {
    zip_error_t e;
    zip_error_init_with_code(&e, code);
    std::string s = zip_error_strerror(&e);
    zip_error_fini(&e);
    return s;
}

std::vector<std::byte> read_entry(zip_t* z, zip_uint64_t index, std::size_t size, const std::string& where) {
    ZipFile f(zip_fopen_index(z, index, 0));
    if (!f) throw FormatError(where + ": cannot read (" + zip_error_strerror(zip_get_error(z)) + ")");
    std::vector<std::byte> out(size);
    std::size_t got = 0;
    while (got < size) {
        const zip_int64_t n = zip_fread(f.get(), out.data() + got, size - got);
        if (n < 0) throw FormatError(where + ": cannot read (" + zip_file_strerror(f.get()) + ")");
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    std::byte extra;
    const zip_int64_t n = got == size ? zip_fread(f.get(), &extra, 1) : 0;  // reaching the end checks the CRC
    if (n < 0) throw FormatError(where + ": cannot read (" + zip_file_strerror(f.get()) + ")");
    if (got != size || n != 0)
        throw FormatError(where + ": holds a different number of bytes than its archive entry claims (" + std::to_string(size) + ")");
    return out;
}

}  // namespace remat::hf::detail
