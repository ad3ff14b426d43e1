// Writing generated files so that a build never sees a half-written or needlessly touched one:
//  * every file is first written to a temporary in its destination folder, then renamed over
//    the destination (atomic on POSIX file systems);
//  * a file whose contents are unchanged is not rewritten, so its mtime is kept and the build
//    system does not recompile it;
//  * all temporaries are written before the first rename, so an I/O error (disk full) leaves
//    the folder as it was.
#pragma once

#include <string>
#include <vector>

namespace tilegen {

struct OutputFile {
  std::string name; // file name inside the output folder (no '/')
  std::string contents;
};

struct WriteReport {
  std::vector<std::string> written;   // created or replaced
  std::vector<std::string> unchanged; // same contents: left alone
  std::vector<std::string> removed;   // stale files deleted by remove_stale_files
};

// Writes `files` into `dir` (created if missing) as described above. Returns "" on success or
// a message naming the file and the system error; on error no destination file was changed
// (unless a rename itself fails half-way, which the message then says).
std::string write_files_atomically(const std::string& dir, const std::vector<OutputFile>& files,
                                   WriteReport* report);

// Deletes regular files in `dir` for which `is_candidate(name)` holds, that are not in
// `keep`, and whose first line is exactly `marker` (so that a user's own file is never
// removed). Also deletes temporaries left by an interrupted write of a candidate. Returns ""
// or an error message.
std::string remove_stale_files(const std::string& dir, const std::vector<std::string>& keep,
                               bool (*is_candidate)(const std::string& name, const void* ctx),
                               const void* ctx, const std::string& marker,
                               WriteReport* report);

// Reads a whole file; false if it cannot be read.
bool read_file(const std::string& path, std::string& out);

} // namespace tilegen
