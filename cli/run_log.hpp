#pragma once
// `remat train --log FILE.jsonl`: one JSON object per optimiser step, appended and flushed as the run
// goes, so that a crash loses at most the line being written (docs/training.md lists the fields).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "remat/train/trainer.hpp"

namespace remat::cli {

class RunLog {
public:
    // A new run starts the file afresh. A resumed run (`resumed_step` given) keeps the entries up to
    // that step and drops the later ones (rewritten atomically), then appends: so the file reads as
    // one uninterrupted run. Failure naming the file when it cannot be written.
    RunLog(const std::filesystem::path& path, std::optional<std::int64_t> resumed_step);
    ~RunLog();
    RunLog(const RunLog&) = delete;
    RunLog& operator=(const RunLog&) = delete;

    void write(const train::StepReport& record);

private:
    std::filesystem::path path_;
    std::FILE* file_ = nullptr;
};

}  // namespace remat::cli
