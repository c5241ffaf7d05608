#include "experiments/distribution.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include "base/check.h"
#include "base/error.h"

#if defined(ZIONSIM_WITH_MPI)
#include <mpi/mpi.h>
#endif

namespace zx::experiments {
namespace {

// A whole decimal number in [lo, hi], or nullopt.
std::optional<long long> parse_count(std::string_view text, long long lo, long long hi) {
  long long value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < lo || value > hi) return std::nullopt;
  return value;
}

}  // namespace

Shard parse_shard(const std::string& text, const std::string& option) {
  const std::size_t slash = text.find('/');
  const auto bad = [&](const std::string& why) {
    return InputError(Diagnostic{option, "", "expected K/N, share K (from 0) of N shares, " + why});
  };
  if (slash == std::string::npos) throw bad("got '" + text + "'");
  const auto count = parse_count(std::string_view(text).substr(slash + 1), 1, kMaxShards);
  if (!count) {
    throw bad("with N a whole number from 1 to " + std::to_string(kMaxShards) + ", got '" + text + "'");
  }
  const auto index = parse_count(std::string_view(text).substr(0, slash), 0, *count - 1);
  if (!index) throw bad("with K a whole number from 0 to N - 1 = " + std::to_string(*count - 1) + ", got '" + text + "'");
  return Shard{static_cast<int>(*index), static_cast<int>(*count)};
}

std::optional<Shard> shard_from_environment() {
  const char* id = std::getenv("SLURM_ARRAY_TASK_ID");
  if (id == nullptr) return std::nullopt;
  const auto variable = [](const char* name) -> long long {
    const char* value = std::getenv(name);
    if (value == nullptr) {
      throw InputError(Diagnostic{std::string("$") + name, "",
                                  "not set, though SLURM_ARRAY_TASK_ID is: expected Slurm's job-array variables "
                                  "(or give --shard K/N)"});
    }
    const auto parsed = parse_count(value, 0, std::numeric_limits<int>::max());
    if (!parsed) {
      throw InputError(Diagnostic{std::string("$") + name, "",
                                  std::string("expected a whole number >= 0, got '") + value + "'"});
    }
    return *parsed;
  };
  const long long task = variable("SLURM_ARRAY_TASK_ID");
  const long long count = variable("SLURM_ARRAY_TASK_COUNT");
  const long long min = variable("SLURM_ARRAY_TASK_MIN");
  if (count < 1 || count > kMaxShards || task < min || task - min >= count) {
    throw InputError(Diagnostic{
        "$SLURM_ARRAY_TASK_ID", "",
        "task " + std::to_string(task) + " of an array of " + std::to_string(count) + " from " + std::to_string(min) +
            " is not one of consecutive ids min .. min + count - 1: give the array as a range with step 1 "
            "(--array=0-" + std::to_string(std::max<long long>(count, 1) - 1) + "), or --shard K/N"});
  }
  return Shard{static_cast<int>(task - min), static_cast<int>(count)};
}

std::vector<std::size_t> largest_first(std::span<const double> costs) {
  std::vector<std::size_t> order(costs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  return order;
}

std::vector<std::size_t> shard_tasks(std::span<const double> costs, Shard shard) {
  ZX_CHECK(shard.count >= 1 && shard.index >= 0 && shard.index < shard.count, "a share of a sweep");
  for (const double c : costs) ZX_CHECK(std::isfinite(c) && c >= 0, "task costs are finite and >= 0");
  std::vector<double> load(static_cast<std::size_t>(shard.count), 0.0);
  std::vector<std::size_t> mine;
  for (const std::size_t task : largest_first(costs)) {
    // The least loaded share, the lowest on ties: the same on every machine.
    const auto least = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[least] += costs[task];
    if (static_cast<int>(least) == shard.index) mine.push_back(task);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

int available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

namespace {

struct MpiState {
  bool initialised = false;
  int rank = 0;
  int size = 1;
};

MpiState& mpi_state() {
  static MpiState state;
  return state;
}

bool launched_by_mpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

}  // namespace

bool Mpi::active() { return mpi_state().initialised && mpi_state().size > 1; }
int Mpi::rank() { return mpi_state().rank; }
int Mpi::size() { return mpi_state().size; }

void Mpi::abort(int status) {
#if defined(ZIONSIM_WITH_MPI)
  if (mpi_state().initialised) MPI_Abort(MPI_COMM_WORLD, status);
#else
  (void)status;
#endif
}

MpiSession::MpiSession(int* argc, char*** argv) {
#if defined(ZIONSIM_WITH_MPI)
  if (!launched_by_mpi()) return;
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  MpiState& s = mpi_state();
  s.initialised = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
#else
  (void)argc;
  (void)argv;
  if (launched_by_mpi()) {
    std::fputs("zionsim: built without MPI (--define=mpi=off): under mpirun every rank runs the whole command\n",
               stderr);
  }
#endif
}

MpiSession::~MpiSession() {
#if defined(ZIONSIM_WITH_MPI)
  if (mpi_state().initialised) MPI_Finalize();
#endif
}

namespace {

// A rank's threads: tasks pushed by the main thread, bytes back to it.
class LocalPool {
 public:
  LocalPool(int threads, const TaskFunction& task) : task_(task) {
    for (int t = 0; t < threads; ++t) threads_.emplace_back([this] { work(); });
  }
  ~LocalPool() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    wake_workers_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  LocalPool(const LocalPool&) = delete;
  LocalPool& operator=(const LocalPool&) = delete;

  void push(std::size_t task) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      todo_.push_back(task);
    }
    wake_workers_.notify_one();
  }
  // A finished task's bytes, waiting at most `timeout` for one.
  std::optional<std::pair<std::size_t, std::string>> pop_done(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!wake_main_.wait_for(lock, timeout, [this] { return !done_.empty(); })) return std::nullopt;
    auto out = std::move(done_.front());
    done_.pop_front();
    return out;
  }

 private:
  void work() {
    while (true) {
      std::size_t task = 0;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_workers_.wait(lock, [this] { return closed_ || !todo_.empty(); });
        if (todo_.empty()) return;
        task = todo_.front();
        todo_.pop_front();
      }
      std::string bytes = task_(task);
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        done_.emplace_back(task, std::move(bytes));
      }
      wake_main_.notify_one();
    }
  }

  const TaskFunction& task_;
  std::mutex mutex_;
  std::condition_variable wake_workers_;
  std::condition_variable wake_main_;
  std::deque<std::size_t> todo_;
  std::deque<std::pair<std::size_t, std::string>> done_;
  bool closed_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace

#if defined(ZIONSIM_WITH_MPI)
namespace {

constexpr int kTagRequest = 1;  // worker -> 0: a thread is free
constexpr int kTagTask = 2;     // 0 -> worker: a task index, or -1 for none left
constexpr int kTagResult = 3;   // worker -> 0: 8 bytes of task index, then the task's bytes

void send_result(std::size_t task, const std::string& bytes) {
  std::string message(8, '\0');
  const auto index = static_cast<std::uint64_t>(task);
  std::memcpy(message.data(), &index, 8);
  message += bytes;
  ZX_CHECK(message.size() <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
           "a task's result fits one MPI message");
  MPI_Send(message.data(), static_cast<int>(message.size()), MPI_BYTE, 0, kTagResult, MPI_COMM_WORLD);
}

void run_worker(int threads, const TaskFunction& task) {
  LocalPool pool(threads, task);
  int outstanding = 0;
  bool exhausted = false;
  while (true) {
    while (!exhausted && outstanding < threads) {
      MPI_Send(nullptr, 0, MPI_BYTE, 0, kTagRequest, MPI_COMM_WORLD);
      std::int64_t next = -1;
      MPI_Recv(&next, 1, MPI_INT64_T, 0, kTagTask, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (next < 0) {
        exhausted = true;
      } else {
        pool.push(static_cast<std::size_t>(next));
        ++outstanding;
      }
    }
    if (outstanding == 0) return;
    if (auto done = pool.pop_done(std::chrono::milliseconds(100))) {
      send_result(done->first, done->second);
      --outstanding;
    }
  }
}

void run_root(std::span<const std::size_t> order, int threads, const TaskFunction& task,
              const ResultFunction& on_result) {
  LocalPool pool(threads, task);
  std::size_t next = 0;
  std::size_t received = 0;
  int local = 0;
  int workers_left = Mpi::size() - 1;  // workers not yet told that none is left
  std::string buffer;
  while (received < order.size() || workers_left > 0) {
    while (local < threads && next < order.size()) {
      pool.push(order[next++]);
      ++local;
    }
    bool busy = false;
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
    if (flag != 0) {
      busy = true;
      if (status.MPI_TAG == kTagRequest) {
        MPI_Recv(nullptr, 0, MPI_BYTE, status.MPI_SOURCE, kTagRequest, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        std::int64_t reply = -1;
        if (next < order.size()) reply = static_cast<std::int64_t>(order[next++]);
        if (reply < 0) --workers_left;
        MPI_Send(&reply, 1, MPI_INT64_T, status.MPI_SOURCE, kTagTask, MPI_COMM_WORLD);
      } else {
        ZX_CHECK(status.MPI_TAG == kTagResult, "a sweep's messages are requests and results");
        int count = 0;
        MPI_Get_count(&status, MPI_BYTE, &count);
        ZX_CHECK(count >= 8, "a result starts with its task index");
        buffer.resize(static_cast<std::size_t>(count));
        MPI_Recv(buffer.data(), count, MPI_BYTE, status.MPI_SOURCE, kTagResult, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        std::uint64_t index = 0;
        std::memcpy(&index, buffer.data(), 8);
        ++received;
        on_result(static_cast<std::size_t>(index), buffer.substr(8));
      }
    }
    // Waits (a millisecond at most) only when nothing came from the others.
    if (local == 0) {
      if (!busy) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } else if (auto done = pool.pop_done(std::chrono::milliseconds(busy ? 0 : 1))) {
      --local;
      ++received;
      on_result(done->first, std::move(done->second));
    }
  }
}

}  // namespace
#endif

void run_over_mpi(std::span<const std::size_t> order, int threads, const TaskFunction& task,
                  const ResultFunction& on_result) {
  ZX_CHECK(Mpi::active(), "run_over_mpi runs inside an MPI job");
  ZX_CHECK(threads >= 1, "at least one thread per rank");
#if defined(ZIONSIM_WITH_MPI)
  if (Mpi::rank() == 0) {
    run_root(order, threads, task, on_result);
  } else {
    run_worker(threads, task);
  }
#else
  (void)order;
  (void)task;
  (void)on_result;
#endif
}

}  // namespace zx::experiments
