#pragma once
// `remat train --log FILE.jsonl`: one JSON object per optimiser step, appended and flushed as the run
// goes, so that a crash loses at most the line being written (docs/training.md lists the fields).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>

namespace remat::cli {

struct StepRecord {
    std::int64_t step = 0;
    double epoch = 0;  // epochs done, fractional
    std::uint64_t tokens = 0;
    float loss = 0, lr = 0, grad_norm = 0;
    double tokens_per_second = 0;
    std::size_t peak_activation_bytes = 0;
    std::optional<double> valid_loss;  // where validation ran after this step
    std::optional<double> communication_seconds;  // data parallel: summing the gradients and losses over ranks
};

class RunLog {
public:
    // A new run starts the file afresh. A resumed run (`resumed_step` given) keeps the entries up to
    // that step and drops the later ones (rewritten atomically), then appends: so the file reads as
    // one uninterrupted run. Failure naming the file when it cannot be written.
    RunLog(const std::filesystem::path& path, std::optional<std::int64_t> resumed_step);
    ~RunLog();
    RunLog(const RunLog&) = delete;
    RunLog& operator=(const RunLog&) = delete;

    void write(const StepRecord& record);

private:
    std::filesystem::path path_;
    std::FILE* file_ = nullptr;
};

}  // namespace remat::cli
