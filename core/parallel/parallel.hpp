// Threads for the large matrix products of untraced inference (not in the paper: speed only).
// Core is built with EIGEN_DONT_PARALLELIZE; these split a product into blocks fixed by the
// matrix's shape alone (never by the thread count), run on a small persistent pool, so the
// result is bitwise the same on 1, 2 or 4 threads.
#pragma once
#include <functional>

#include "core/model/types.hpp"

namespace sf {

// The threads that parallel_for uses (the caller counts as one). Default:
// std::thread::hardware_concurrency() capped to [1, 4]. set_compute_threads(n) clamps n to [1, 64].
int compute_threads();
void set_compute_threads(int n);

// Multiply–adds below which a split does not pay for waking a thread (about 10 µs of work).
constexpr double kParallelMinWork = 1e6;

// fn(k) for k = 0 … n_tasks − 1 on up to compute_threads() threads, the caller among them; returns
// when every call has returned. Tasks must write disjoint outputs. A parallel_for inside a task,
// or while another thread's parallel_for holds the pool, runs its tasks on the calling thread.
// With work < kParallelMinWork (the caller's estimate of multiply–adds), all run on the caller.
void parallel_for(int n_tasks, const std::function<void(int)>& fn, double work = kParallelMinWork);

// fn(k) for k = 0 … n_tasks − 1 on up to `threads` threads of the same pool (the caller among them),
// whatever compute_threads() says: the Trainer's minibatch split (TrainOptions::threads). The same
// rules as parallel_for: disjoint outputs, inline inside a task or while the pool is held.
void parallel_for_on(int threads, int n_tasks, const std::function<void(int)>& fn);

// Y = A·B with the rows of A in blocks fixed by A's shape (large products) or in one piece.
// A (m, k), B (k, n) → (m, n). Bitwise the same on any number of threads.
template <class T, class DerivedA>
Mat<T> product(const Eigen::MatrixBase<DerivedA>& A, const Mat<T>& B);
// Y = Aᵀ·B (the tied unembedding W_eᵀ X): A (k, m) column-major, its columns in fixed blocks → (m, n).
template <class T>
Mat<T> product_transposed(const MapM<const T>& A, const Mat<T>& B);

// The blocks a product of m output rows is cut into: about one per kParallelMinWork multiply–adds,
// at most 16, each a multiple of 16 rows (1: no split).
int product_blocks(Eigen::Index m, Eigen::Index k, Eigen::Index n);

template <class T, class DerivedA>
Mat<T> product(const Eigen::MatrixBase<DerivedA>& A, const Mat<T>& B) {
  Mat<T> Y(A.rows(), B.cols());  // (m, n)
  const int blocks = product_blocks(A.rows(), A.cols(), B.cols());
  if (blocks == 1) {
    Y.noalias() = A * B;
    return Y;
  }
  const Eigen::Index step = ((A.rows() + blocks - 1) / blocks + 15) / 16 * 16;  // blocks·step ≥ m
  parallel_for(blocks, [&](int b) {
    const Eigen::Index r0 = b * step, nr = std::min<Eigen::Index>(step, A.rows() - r0);
    if (nr > 0) Y.middleRows(r0, nr).noalias() = A.middleRows(r0, nr) * B;
  });
  return Y;
}

}  // namespace sf
