// A small persistent pool for parallel_for (parallel.hpp): workers wait on a condition variable,
// take task indices from an atomic counter, and the caller works alongside them.
#include "core/parallel/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#ifdef STEPFORMER_BLAS
extern "C" void openblas_set_num_threads(int);  // OpenBLAS's own API (cblas.h would clash with Eigen's blas.h)
extern "C" char* openblas_get_config();
#endif

namespace sf {

namespace {

#ifdef STEPFORMER_BLAS
// Eigen's products call OpenBLAS (CMake's STEPFORMER_BLAS): its own pool stays at one thread, so that
// compute_threads() alone decides how many threads work (a product is split by parallel_for, not by OpenBLAS).
[[maybe_unused]] const bool openblas_one_thread = (openblas_set_num_threads(1), true);
#endif

thread_local bool in_task = false;  // a parallel_for inside a task runs inline

class Pool {
 public:
  ~Pool() {
    {
      const std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
    }
    start_.notify_all();
    for (auto& t : workers_) t.join();
  }

  // False when another thread's job holds the pool (the caller then runs its tasks itself).
  bool run(int threads, int n_tasks, const std::function<void(int)>& fn) {
    const std::unique_lock<std::mutex> one_job(job_, std::try_to_lock);
    if (!one_job.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lk(m_);
      while (static_cast<int>(workers_.size()) < threads - 1) {
        const int id = static_cast<int>(workers_.size());
        workers_.emplace_back([this, id] { work(id); });
      }
      fn_ = &fn;
      n_ = n_tasks;
      next_ = 0;
      finished_ = 0;
      helpers_ = threads - 1;
      joined_ = 0;
      ++generation_;
    }
    start_.notify_all();
    take_tasks();
    std::unique_lock<std::mutex> lk(m_);
    // Every helper must have joined and left this job before the next one rewrites n_ and fn_:
    // a helper that woke late would otherwise read them while they change.
    done_.wait(lk, [&] { return finished_.load() == n_ && joined_ == helpers_ && busy_ == 0; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return true;
  }

 private:
  void take_tasks() {
    in_task = true;
    for (int k; (k = next_.fetch_add(1)) < n_;) {
      try {
        (*fn_)(k);
      } catch (...) {  // kept for the caller (an exception must not leave a worker thread)
        const std::lock_guard<std::mutex> lk(error_m_);
        if (!error_) error_ = std::current_exception();
      }
      finished_.fetch_add(1);
    }
    in_task = false;
  }

  void work(int id) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lk(m_);
    while (true) {
      start_.wait(lk, [&] { return stop_ || (generation_ != seen && id < helpers_); });
      if (stop_) return;
      seen = generation_;
      ++joined_;
      ++busy_;
      lk.unlock();
      take_tasks();
      lk.lock();
      --busy_;
      done_.notify_all();
    }
  }

  std::mutex job_;  // one parallel_for at a time
  std::mutex m_, error_m_;
  std::exception_ptr error_;  // the first exception a task threw
  std::condition_variable start_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(int)>* fn_ = nullptr;
  int n_ = 0, helpers_ = 0, joined_ = 0, busy_ = 0;  // guarded by m_
  std::atomic<int> next_{0}, finished_{0};
  uint64_t generation_ = 0;
  bool stop_ = false;
};

Pool& pool() {
  static Pool p;
  return p;
}

int default_threads() {
  const int hw = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(hw, 1, 4);
}

std::atomic<int>& threads_setting() {
  static std::atomic<int> n{default_threads()};
  return n;
}

}  // namespace

int compute_threads() { return threads_setting().load(); }

void set_compute_threads(int n) { threads_setting() = std::clamp(n, 1, 64); }

void parallel_for_on(int threads, int n_tasks, const std::function<void(int)>& fn) {
  threads = std::min(std::clamp(threads, 1, 64), n_tasks);
  if (threads > 1 && !in_task && pool().run(threads, n_tasks, fn)) return;
  for (int k = 0; k < n_tasks; ++k) fn(k);
}

void parallel_for(int n_tasks, const std::function<void(int)>& fn, double work) {
  parallel_for_on(work >= kParallelMinWork ? compute_threads() : 1, n_tasks, fn);
}

int product_blocks(Eigen::Index m, Eigen::Index k, Eigen::Index n) {
  const double work = static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
  const Eigen::Index by_work = static_cast<Eigen::Index>(work / kParallelMinWork);
  return static_cast<int>(std::clamp<Eigen::Index>(std::min(by_work, m / 16), 1, 16));
}

template <class T>
Mat<T> product_transposed(const MapM<const T>& A, const Mat<T>& B) {
  Mat<T> Y(A.cols(), B.cols());  // (m, n)
  for_product_rows(A.cols(), A.rows(), B.cols(), [&](Eigen::Index c0, Eigen::Index nc) {
    Y.middleRows(c0, nc).noalias() = A.middleCols(c0, nc).transpose() * B;
  });
  return Y;
}

template MatF product_transposed(const MapM<const float>&, const MatF&);
template Mat<double> product_transposed(const MapM<const double>&, const Mat<double>&);

std::string matrix_product_library() {
#ifdef STEPFORMER_BLAS
  const char* config = openblas_get_config();  // e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64"
  return std::string(config ? config : "OpenBLAS") + " (its own threads held to one)";
#else
  return "Eigen (its own GEMM; built with STEPFORMER_BLAS=OFF)";  // its version is About's Eigen row
#endif
}

}  // namespace sf
