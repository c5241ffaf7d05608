// File: experiments/distribution.h
//
// Where the points of a sweep run: on this process's threads, spread over the
// ranks of an MPI job (mpirun), or as one shard of a Slurm job array whose
// shards are merged afterwards. A sweep is a list of independent tasks
// (numbered 0..n-1 in the order the one-process run lists them) with an
// estimated cost each; what a task computes is the caller's, as bytes.
//
// Shards. `--shard K/N` (K from 0) takes the K-th of N shares of the tasks,
// dealt deterministically by their costs, largest first, each to the share
// with the least cost so far (ties to the lower share; Graham's LPT rule), so
// that a share's set depends only on the costs and N. Inside a Slurm job
// array the share defaults to the array task's: K = SLURM_ARRAY_TASK_ID -
// SLURM_ARRAY_TASK_MIN, N = SLURM_ARRAY_TASK_COUNT (Slurm's sbatch(1),
// "OUTPUT ENVIRONMENT VARIABLES"), for an array of consecutive ids.
//
// MPI. Every rank parses the same command and builds the same task list;
// rank 0 hands the tasks out one at a time, largest first, to whichever
// rank (itself included) has a thread free, and collects every task's bytes.
// Only rank 0 prints. Messages are plain MPI point-to-point calls from each
// rank's main thread (MPI_THREAD_FUNNELED is enough); the work runs on the
// rank's own threads. A rank that dies ends the whole job (Open MPI's
// default error handler), so nothing waits forever for it.

#ifndef ZIONSIM_EXPERIMENTS_DISTRIBUTION_H_
#define ZIONSIM_EXPERIMENTS_DISTRIBUTION_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace zx::experiments {

/// One of `count` shares of a sweep's tasks; 0 <= index < count.
struct Shard {
  int index = 0;
  int count = 1;
  bool operator==(const Shard&) const = default;
};

/// Parses "K/N" (0 <= K < N, N <= kMaxShards). Throws zx::InputError naming
/// `option` and saying what was expected.
Shard parse_shard(const std::string& text, const std::string& option);

/// The most shares a sweep is split into.
inline constexpr int kMaxShards = 100000;

/// The Slurm job array's share when SLURM_ARRAY_TASK_ID is set (see the
/// header comment), nullopt otherwise. Throws zx::InputError naming the
/// variable when the array's variables are malformed or missing.
std::optional<Shard> shard_from_environment();

/// The tasks of share `shard` (ascending task index) when tasks of these
/// costs are dealt by the LPT rule. Costs must be finite and >= 0.
std::vector<std::size_t> shard_tasks(std::span<const double> costs, Shard shard);

/// The task indices by cost, largest first, ties by index.
std::vector<std::size_t> largest_first(std::span<const double> costs);

/// The CPUs this process may run on (its affinity mask; an mpirun rank bound
/// to one core sees one), at least 1.
int available_cpus();

/// The MPI job this process belongs to. Set up by MpiSession in main();
/// without it (or built with --define=mpi=off) a process is rank 0 of 1.
class Mpi {
 public:
  static bool active();  ///< MPI was initialised and the job has more than one rank
  static int rank();
  static int size();
  /// Ends every rank of the job with `status` (MPI_Abort); returns only when
  /// MPI is not active.
  static void abort(int status);
};

/// Initialises MPI when the process was started by an MPI launcher (Open
/// MPI's mpirun sets OMPI_COMM_WORLD_SIZE; PMIx launchers PMIX_RANK) and
/// finalises it when destroyed. Started otherwise, it does nothing: a
/// singleton MPI_Init costs about 0.4 s. Construct it first thing in main().
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

/// What a task's computation gives: its bytes. It must not throw (encode a
/// failure in the bytes).
using TaskFunction = std::function<std::string(std::size_t task)>;
/// Called on rank 0's main thread for each task as its bytes arrive, in the
/// order they arrive.
using ResultFunction = std::function<void(std::size_t task, std::string bytes)>;

/// Runs `order` (task indices, each once; the order they are handed out in)
/// over every rank of the MPI job, `threads` tasks at once per rank. On rank
/// 0 `on_result` sees every task's bytes before this returns; on the other
/// ranks it is never called. Every rank of the job must call it with the
/// same `order`. Requires Mpi::active().
void run_over_mpi(std::span<const std::size_t> order, int threads, const TaskFunction& task,
                  const ResultFunction& on_result);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_DISTRIBUTION_H_
