#include "remat/data/encode.hpp"

#include "remat/core/files.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>

#include "remat/core/error.hpp"
#include "remat/data/token_file.hpp"

namespace remat::data {

namespace fs = std::filesystem;

std::filesystem::path valid_path(const fs::path& out) { return fs::path(out).concat(".valid"); }

std::vector<fs::path> list_documents(const std::vector<fs::path>& inputs) {
    std::vector<fs::path> documents;
    for (const fs::path& input : inputs) {
        std::error_code ec;
        const fs::file_status status = fs::status(input, ec);
        if (!fs::exists(status)) throw ValueError(input.string() + ": " + why_missing(input));
        if (!fs::is_directory(status)) {  // a file, or a pipe such as /dev/stdin
            documents.push_back(input);
            continue;
        }
        std::vector<fs::path> found;
        fs::recursive_directory_iterator it(input, ec), end;
        if (ec) throw ValueError(input.string() + ": cannot list the folder: " + ec.message());
        for (; it != end; it.increment(ec)) {
            if (ec) throw ValueError(input.string() + ": cannot list the folder: " + ec.message());
            const std::string name = it->path().filename().string();
            if (!name.empty() && name[0] == '.') {
                if (it->is_directory(ec)) it.disable_recursion_pending();
                continue;
            }
            if (it->is_regular_file(ec)) found.push_back(it->path());
        }
        std::sort(found.begin(), found.end());
        documents.insert(documents.end(), found.begin(), found.end());
    }
    if (documents.empty()) {
        std::string names;
        for (const fs::path& input : inputs) names += (names.empty() ? "" : ", ") + input.string();
        throw ValueError("no documents to encode: " + (names.empty() ? std::string("no inputs") : names + " hold no files"));
    }
    return documents;
}

namespace detail {

namespace {

struct Chunk {
    std::uint64_t sequence = 0;
    int output = 0;
    bool separator_first = false;  // the document's first chunk, after another document of this output
    std::string text;
};

struct Encoded {
    int output = 0;
    std::uint64_t bytes = 0, count = 0;
    std::vector<std::byte> ids;
    std::exception_ptr error;
};

// Workers encode chunks in any order; the caller writes them in sequence order. At most `limit`
// chunks are in flight (queued, being encoded or waiting to be written), which bounds memory.
class Pool {
public:
    Pool(const text::Tokenizer& tokenizer, std::uint32_t id_bytes, unsigned threads)
        : tokenizer_(tokenizer), id_bytes_(id_bytes), separator_(tokenizer.document_separator()), limit_(threads + 2) {
        for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
    }
    ~Pool() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        work_ready_.notify_all();
        for (std::thread& t : workers_) t.join();
    }

    bool full() const { return submitted_ - written_ >= limit_; }
    bool idle() const { return submitted_ == written_; }

    void submit(Chunk chunk) {
        chunk.sequence = submitted_++;
        {
            std::lock_guard lock(mutex_);
            queue_.push_back(std::move(chunk));
        }
        work_ready_.notify_one();
    }

    // The next chunk in order, once encoded; rethrows a worker's exception.
    Encoded next() {
        std::unique_lock lock(mutex_);
        done_ready_.wait(lock, [&] { return done_.count(written_) != 0; });
        auto node = done_.extract(written_);
        lock.unlock();
        ++written_;
        if (node.mapped().error) std::rethrow_exception(node.mapped().error);
        return std::move(node.mapped());
    }

private:
    void work() {
        while (true) {
            Chunk chunk;
            {
                std::unique_lock lock(mutex_);
                work_ready_.wait(lock, [&] { return stop_ || !queue_.empty(); });
                if (stop_) return;
                chunk = std::move(queue_.front());
                queue_.pop_front();
            }
            Encoded e;
            e.output = chunk.output;
            e.bytes = chunk.text.size();
            try {
                std::vector<std::int64_t> ids;
                if (chunk.separator_first && separator_) ids.push_back(*separator_);
                std::vector<std::int64_t> text_ids = tokenizer_.encode(chunk.text);
                if (ids.empty()) ids = std::move(text_ids);
                else ids.insert(ids.end(), text_ids.begin(), text_ids.end());
                std::string().swap(chunk.text);
                e.count = ids.size();
                append_narrow(ids, id_bytes_, e.ids);
            } catch (...) {
                e.error = std::current_exception();
            }
            {
                std::lock_guard lock(mutex_);
                done_.emplace(chunk.sequence, std::move(e));
            }
            done_ready_.notify_all();
        }
    }

    const text::Tokenizer& tokenizer_;
    const std::uint32_t id_bytes_;
    const std::optional<std::int64_t> separator_;
    const std::uint64_t limit_;
    std::uint64_t submitted_ = 0, written_ = 0;  // touched by the caller's thread only
    std::mutex mutex_;
    std::condition_variable work_ready_, done_ready_;
    std::deque<Chunk> queue_;
    std::map<std::uint64_t, Encoded> done_;
    bool stop_ = false;
    std::vector<std::thread> workers_;
};

// The last character boundary of `text` (a byte that does not continue a UTF-8 sequence), or its end.
std::size_t last_character_boundary(std::string_view text) {
    for (std::size_t p = text.size(); p-- > 1;)
        if ((static_cast<unsigned char>(text[p]) & 0xC0) != 0x80) return p;
    return text.size();
}

class File {
public:
    explicit File(const fs::path& path) : path_(path), f_(std::fopen(path.c_str(), "rb")) {
        if (!f_) fail("cannot open");
    }
    ~File() { std::fclose(f_); }
    File(const File&) = delete;
    File& operator=(const File&) = delete;
    // Appends up to n bytes; false at the end of the file.
    bool read(std::string& buffer, std::size_t n) {
        const std::size_t at = buffer.size();
        buffer.resize(at + n);
        const std::size_t got = std::fread(buffer.data() + at, 1, n, f_);
        buffer.resize(at + got);
        if (std::ferror(f_)) fail("cannot read");
        return got == n;
    }

private:
    [[noreturn]] void fail(const char* what) const {
        const int error = errno;
        throw FormatError(path_.string() + ": " + what + ": " + std::generic_category().message(error));
    }
    fs::path path_;
    std::FILE* f_;
};

}  // namespace

EncodeStats encode_stream(const text::Tokenizer& tokenizer, const std::vector<fs::path>& documents, std::size_t valid_documents,
                          std::uint32_t id_bytes, const EncodeOptions& options,
                          const std::function<void(int, const std::vector<std::byte>&, std::uint64_t)>& sink) {
    const std::size_t chunk_bytes = std::max<std::size_t>(options.chunk_bytes, 1);
    const std::size_t max_chunk_bytes = std::max(options.max_chunk_bytes, chunk_bytes);
    EncodeStats stats;
    EncodeProgress progress;
    for (const fs::path& d : documents) {
        std::error_code ec;
        if (fs::is_regular_file(d, ec)) progress.bytes_total += fs::file_size(d, ec);
    }

    Pool pool(tokenizer, id_bytes, std::max(options.threads, 1u));
    auto write_next = [&] {
        Encoded e = pool.next();
        sink(e.output, e.ids, e.count);
        stats.bytes[e.output] += e.bytes;
        stats.tokens[e.output] += e.count;
        progress.bytes_done += e.bytes;
        progress.tokens += e.count;
        if (options.progress) options.progress(progress);
    };
    auto submit = [&](Chunk chunk) {
        while (pool.full()) write_next();
        pool.submit(std::move(chunk));
    };

    const std::size_t first_valid = documents.size() - valid_documents;
    for (std::size_t i = 0; i < documents.size(); ++i) {
        const int output = i >= first_valid ? 1 : 0;
        ++stats.documents[output];
        bool first_chunk = true;
        auto chunk_of = [&](std::string text) {
            Chunk c{.output = output, .separator_first = first_chunk && i != 0 && i != first_valid, .text = std::move(text)};
            first_chunk = false;
            return c;
        };
        File file(documents[i]);
        std::string buffer;
        std::uint64_t offset = 0;  // of buffer in the document
        while (true) {
            if (!file.read(buffer, chunk_bytes)) {
                submit(chunk_of(std::move(buffer)));  // the rest; an empty document still carries its separator
                break;
            }
            std::size_t cut = tokenizer.last_safe_cut(buffer);
            if (cut == 0) {
                if (buffer.size() < max_chunk_bytes) continue;
                cut = last_character_boundary(buffer);
                stats.warnings.push_back(documents[i].string() + ": no place to cut without changing the ids in " +
                                         std::to_string(buffer.size()) + " bytes from byte " + std::to_string(offset) +
                                         "; cut at byte " + std::to_string(offset + cut) +
                                         " anyway (the ids next to it may differ from encoding the document at once)");
            }
            std::string rest = buffer.substr(cut);
            buffer.resize(cut);
            submit(chunk_of(std::move(buffer)));
            buffer = std::move(rest);
            offset += cut;
        }
    }
    while (!pool.idle()) write_next();
    if (options.progress) options.progress(progress);
    return stats;
}

}  // namespace detail

namespace {

std::size_t valid_count(const std::vector<fs::path>& documents, const EncodeOptions& options) {
    if (options.valid_docs && options.valid_fraction)
        throw ValueError("encode: give the validation split as a number of documents or as a fraction, not both");
    if (!options.valid_docs && !options.valid_fraction) return 0;
    const std::size_t n = documents.size();
    if (n < 2)
        throw ValueError("encode: a validation split needs at least 2 documents (one to train on, one to validate), but the inputs hold " +
                         std::to_string(n));
    if (options.valid_docs) {
        const std::size_t k = *options.valid_docs;
        if (k < 1 || k >= n)
            throw ValueError("encode: " + std::to_string(k) + " validation documents of " + std::to_string(n) +
                             ": give at least 1 and at most " + std::to_string(n - 1));
        return k;
    }
    const double f = *options.valid_fraction;
    if (!(f > 0 && f < 1)) throw ValueError("encode: the validation fraction must be between 0 and 1 (exclusive), got " + std::to_string(f));
    std::vector<std::uint64_t> sizes;
    std::uint64_t total = 0;
    for (const fs::path& d : documents) {
        std::error_code ec;
        const std::uint64_t size = fs::is_regular_file(d, ec) ? fs::file_size(d, ec) : 0;
        sizes.push_back(ec ? 0 : size);
        total += sizes.back();
    }
    const double want = f * static_cast<double>(total);
    std::size_t best = 1;
    double best_gap = INFINITY;
    std::uint64_t tail = 0;
    for (std::size_t k = 1; k < n; ++k) {
        tail += sizes[n - k];
        const double gap = std::abs(static_cast<double>(tail) - want);
        if (gap < best_gap) best = k, best_gap = gap;
    }
    return best;
}

}  // namespace

EncodeReport encode(const text::Tokenizer& tokenizer, std::uint64_t fingerprint, const std::vector<fs::path>& inputs,
                    const fs::path& out, const EncodeOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<fs::path> documents = list_documents(inputs);
    const std::size_t n_valid = valid_count(documents, options);
    const auto vocab = static_cast<std::uint64_t>(tokenizer.vocab_size());
    TokenFileWriter train(out, fingerprint, vocab);
    std::optional<TokenFileWriter> valid;
    if (n_valid > 0) valid.emplace(valid_path(out), fingerprint, vocab);
    detail::EncodeStats stats = detail::encode_stream(
        tokenizer, documents, n_valid, train.id_bytes(), options,
        [&](int output, const std::vector<std::byte>& ids, std::uint64_t count) { (output == 0 ? train : *valid).write_raw(ids, count); });
    if (valid) valid->commit();
    train.commit();

    EncodeReport report;
    report.train = {out, stats.documents[0], stats.bytes[0], stats.tokens[0]};
    if (valid) report.valid = EncodedFile{valid_path(out), stats.documents[1], stats.bytes[1], stats.tokens[1]};
    report.warnings = std::move(stats.warnings);
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
}

}  // namespace remat::data
