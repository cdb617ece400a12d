#include "zip_archive.hpp"

#include "remat/hf/error.hpp"

#include <limits>

namespace remat::hf::detail {

std::string zip_message(int code) {
    zip_error_t e;
    zip_error_init_with_code(&e, code);
    std::string s = zip_error_strerror(&e);
    zip_error_fini(&e);
    return s;
}

std::size_t checked_entry_size(zip_t* z, zip_uint64_t index, std::size_t archive_bytes, const std::string& where) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(z, index, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE))
        throw FormatError(where + ": cannot stat (" + zip_error_strerror(zip_get_error(z)) + ")");
    // The claims are checked before anything is allocated for them: a 600-byte archive may say 6 GB.
    if (st.comp_size > archive_bytes)
        throw FormatError(where + ": claims " + std::to_string(st.comp_size) + " stored bytes, but the archive is " +
                          std::to_string(archive_bytes) + " bytes");
    const bool stored = (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method == ZIP_CM_STORE;
    if (stored && st.size != st.comp_size)
        throw FormatError(where + ": an uncompressed entry of " + std::to_string(st.comp_size) + " bytes claims to hold " +
                          std::to_string(st.size));
    // Deflate expands at most ~1032:1: a larger claim is a lie meant to make us allocate.
    if (!stored && st.size / 1032 > st.comp_size + 1)
        throw FormatError(where + ": claims " + std::to_string(st.size) + " bytes from " + std::to_string(st.comp_size) +
                          " compressed ones");
    if (st.size > std::numeric_limits<std::size_t>::max()) throw FormatError(where + ": too large");
    return static_cast<std::size_t>(st.size);
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
