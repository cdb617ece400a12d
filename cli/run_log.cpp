#include "cli/run_log.hpp"

#include <cerrno>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/errors.hpp"
#include "cli/numbers.hpp"
#include "remat/hf/load.hpp"
#include "src/core/strict_json.hpp"

namespace remat::cli {

namespace {

// The lines of an earlier log whose step is at most `last` (unreadable lines are dropped: a line cut
// by a crash).
std::string entries_up_to(const std::filesystem::path& path, std::int64_t last) {
    std::ifstream in(path, std::ios::binary);
    std::string kept, line;
    while (std::getline(in, line)) {
        nlohmann::json j;
        try {
            j = strict_json::parse<nlohmann::json>(line, path.string());
        } catch (const FormatError&) {
            continue;
        }
        if (!j.is_object() || !j.contains("step") || !j["step"].is_number_integer()) continue;
        if (j["step"].get<std::int64_t>() <= last) kept += line + "\n";
    }
    return kept;
}

}  // namespace

RunLog::RunLog(const std::filesystem::path& path, std::optional<std::int64_t> resumed_step) : path_(path) {
    std::error_code ec;
    if (resumed_step && std::filesystem::exists(path, ec)) hf::write_text_atomically(path, entries_up_to(path, *resumed_step));
    file_ = std::fopen(path.c_str(), resumed_step ? "ab" : "wb");
    if (!file_) {
        const int error = errno;
        throw Failure(path.string() + ": cannot write the log: " + std::strerror(error));
    }
}

RunLog::~RunLog() {
    if (file_) std::fclose(file_);
}

void RunLog::write(const train::StepReport& r) {
    // Non-finite numbers are not JSON: they are written as null (a diverged step's loss).
    auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    // A float as the shortest decimal that reads back as it (3e-4, not 0.0003000000142492354).
    auto shortest = [&](float v) { return number(std::strtod(shortest_text(v).c_str(), nullptr)); };
    nlohmann::ordered_json j = {{"step", r.step},
                                {"epoch", r.epoch},
                                {"tokens", r.tokens},
                                {"loss", shortest(r.loss)},
                                {"lr", shortest(r.lr)},
                                {"grad_norm", shortest(r.grad_norm)},
                                {"tokens_per_second", r.tokens_per_second},
                                {"peak_activation_bytes", r.peak_activation_bytes}};
    if (r.communication_seconds) j["communication_seconds"] = number(*r.communication_seconds);
    if (r.valid_loss) {
        j["valid_loss"] = number(*r.valid_loss);
        j["valid_perplexity"] = number(std::exp(*r.valid_loss));
    }
    const std::string line = j.dump() + "\n";
    if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
        throw Failure(path_.string() + ": cannot write the log: " + std::strerror(errno));
}

}  // namespace remat::cli
