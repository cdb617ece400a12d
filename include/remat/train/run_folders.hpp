#pragma once
// A run's saved states on disk, in HF Trainer's layout: OUT/checkpoint-STEP/ holds everything a
// resume needs (the model's files, the optimiser state, run_state.json). ("checkpoint" here is HF's
// folder name only; in remat's code the word means gradient checkpointing.)
//
//   train::write_folder_atomically(train::run_folder(out, step), [&](const fs::path& partial) {
//       model->save(config, partial);  optimiser->save_state(partial / "optimiser.safetensors");
//       train::save_run_state(state, partial / "run_state.json");   // last: it marks completeness
//   });
//   if (auto latest = train::latest_run_folder(out)) { … resume from *latest … }
//   train::keep_latest(out, 3);
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>

namespace remat::train {

// OUT/checkpoint-STEP
std::filesystem::path run_folder(const std::filesystem::path& out, std::int64_t step);

// Fills a temporary sibling folder (".NAME.partial", emptied first), then renames it to `folder`,
// replacing a folder of that name only once the new one is complete: a crash at any moment leaves
// either the old folder or the new one, and perhaps a leftover ".partial" that the next write removes
// and latest_run_folder ignores.
// The temporary sibling write_folder_atomically fills for `folder` (other processes may write into
// it while `fill` runs).
std::filesystem::path partial_folder(const std::filesystem::path& folder);

void write_folder_atomically(const std::filesystem::path& folder,
                             const std::function<void(const std::filesystem::path& partial)>& fill);

// The numerically latest OUT/checkpoint-N that holds run_state.json; none when there is no such folder.
std::optional<std::filesystem::path> latest_run_folder(const std::filesystem::path& out);

// Removes all but the `keep` latest complete OUT/checkpoint-N folders (keep >= 1).
void keep_latest(const std::filesystem::path& out, std::size_t keep);

// OUT held by one run while it lives (an advisory lock on the folder, released when the process ends,
// however it ends): a second run saving into OUT at the same time would replace the first's
// checkpoints with its own. Creates OUT if missing. ValueError "OUT: another run is saving into this
// folder (…)" when one is.
class SaveFolderLock {
public:
    explicit SaveFolderLock(const std::filesystem::path& out);
    ~SaveFolderLock();
    SaveFolderLock(const SaveFolderLock&) = delete;
    SaveFolderLock& operator=(const SaveFolderLock&) = delete;

private:
    int fd_ = -1;
};

}  // namespace remat::train
