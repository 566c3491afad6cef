// The SIMT IR: one kernel as the program a single thread (invocation / work-item) runs. It is what
// the shared lowering (lowering/lower_kernel.h) produces from the tile IR and what every emitter
// (SPIR-V, PTX, AMDGCN LLVM IR) consumes, so it holds only what all three can express directly:
// scalar typed values, flat arrays in three memory spaces, structured control flow, barriers,
// subgroup reductions and atomics. Tile shapes, layouts, roles and mbarriers are gone by the time
// a kernel is in this form. See lowering/README.md, "The SIMT IR".
//
// Invariants the lowering guarantees and emitters may rely on:
// - Operands of a binary op have the same type; arithmetic and comparisons happen only on i32,
//   u32, i64, f32, f64 (and logic on bool). 16-bit and 8-bit types (f16, bf16, i8, u8) appear only
//   as array element types and as the source or target of a cast.
// - Indices are i32 element offsets into flat arrays (the runtime refuses tensors of 2^31 or more
//   elements). Every global access is in bounds: the lowering guards loads and stores with ifs.
// - ceildiv never appears (it is expanded); select(c, a, b) does, with a bool condition.
// - Barriers (workgroup, subgroup, named) are only placed where control flow is uniform across
//   the threads that take part.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/expr.h"
#include "ir/kernel.h"

namespace tilert::simt {

// Where an array lives. Global arrays are kernel parameters (storage buffers / global pointers),
// shared arrays belong to the workgroup (Workgroup storage / .shared / LDS), private arrays and
// scalars to one thread (Function storage / registers or .local / alloca).
enum class Space : uint8_t { kGlobal, kShared, kPrivate };
std::string_view space_name(Space s);

// Values every thread can read. All are i32 except kClock (i64, a cycle or nanosecond counter; an
// emitter for a target without one reports an error) and kCycles (i64, the processor's cycle
// counter: fine-grained, comparable only within one workgroup; PTX %clock64).
// X(enumerator, spelling)
#define TILERT_SIMT_BUILTINS(X)                                                         \
  X(kLocalId, "local_id")             /* the thread's index in its workgroup, 0..threads-1 */ \
  X(kWorkgroupIdX, "workgroup_id.x")                                                    \
  X(kWorkgroupIdY, "workgroup_id.y")                                                    \
  X(kWorkgroupIdZ, "workgroup_id.z")                                                    \
  X(kSubgroupSize, "subgroup_size")   /* lanes per subgroup, a run-time value */        \
  X(kSubgroupLane, "subgroup_lane")   /* the thread's lane in its subgroup */           \
  X(kSubgroupId, "subgroup_id")       /* the subgroup's index in the workgroup */       \
  X(kClock, "clock")                                                                    \
  X(kCycles, "cycles")

enum class Builtin : uint8_t {
#define TILERT_X(e, s) e,
  TILERT_SIMT_BUILTINS(TILERT_X)
#undef TILERT_X
};
std::string_view builtin_name(Builtin b);

// X(enumerator, spelling)
#define TILERT_SIMT_EXPR_KINDS(X)                                                        \
  X(kConst, "const")        /* int_value (integers, bool) or float_value (floats) */     \
  X(kVar, "var")            /* id: a private scalar (Function::variables[id], count 0) */ \
  X(kParam, "param")        /* id: a scalar parameter (Function::params[id]) */           \
  X(kBuiltin, "builtin")    /* op: Builtin */                                             \
  X(kUnary, "unary")        /* op: tilert::UnaryOp; args[0] */                            \
  X(kBinary, "binary")      /* op: tilert::BinaryOp; args[0], args[1] (same type) */       \
  X(kCall, "call")          /* op: tilert::Func (never kCeilDiv); args by arity */         \
  X(kCast, "cast")          /* type is the target; args[0] the value */                   \
  X(kLoad, "load")          /* space, id (array), args[0] the i32 element index */        \
  X(kSubgroupReduce, "subgroup_reduce") /* op: tilert::ReduceKind; args[0]: the value of \
                                           every lane combined, result on all lanes; only in \
                                           control flow uniform across the subgroup, whose  \
                                           lanes all exist (PTX shuffles with a full mask).  \
                                           int_value: 0 reduces the whole subgroup; a power  \
                                           of two c > 1 reduces each aligned cluster of c    \
                                           lanes (lanes c q .. c q + c - 1) separately, the  \
                                           targets with TargetFeature kSubgroupClustered */  \
  X(kMatrixElement, "matrix_element") /* id: accumulator matrix; int_value: element k of the  \
                                         lane's share, in the layout the target exposes      \
                                         (matrix_plan.h, matrix_element_coords; PTX only);   \
                                         f32 */                                              \
  X(kMbarrierTest, "mbarrier_test") /* id: shared array of hardware mbarriers; args [index, \
                                       parity] (i32): bool, whether the phase with that parity \
                                       has completed (PTX mbarrier.try_wait.parity: may       \
                                       suspend the thread briefly; acquire at block scope, so  \
                                       the phase's copies are visible once it is true) */

enum class ExprKind : uint8_t {
#define TILERT_X(e, s) e,
  TILERT_SIMT_EXPR_KINDS(TILERT_X)
#undef TILERT_X
};

struct Expr {
  // The small fields first, packed into one word: a kernel's SIMT IR holds thousands of nodes,
  // and 48 bytes a node instead of 56 is less memory to allocate, touch and free.
  ExprKind kind = ExprKind::kConst;
  DType type = DType::kI32;
  Space space = Space::kPrivate;
  uint8_t op = 0;
  uint32_t id = 0;
  int64_t int_value = 0;
  double float_value = 0.0;
  std::vector<Expr> args;

  static Expr int_const(int64_t v, DType type = DType::kI32);
  static Expr float_const(double v, DType type = DType::kF32);
  static Expr bool_const(bool v);
  static Expr var(uint32_t id, DType type);
  static Expr param(uint32_t id, DType type);
  static Expr builtin(Builtin b);
  static Expr unary(UnaryOp op, Expr a);
  // Comparisons and && / || give bool; others the operands' type.
  static Expr binary(BinaryOp op, Expr a, Expr b);
  static Expr call(Func f, std::vector<Expr> args);
  static Expr cast(DType to, Expr a);  // returns `a` itself when it already has type `to`
  static Expr load(Space space, uint32_t array, DType element_type, Expr index);
  // cluster 0: the whole subgroup; else each aligned cluster of `cluster` lanes (a power of two).
  static Expr subgroup_reduce(ReduceKind kind, Expr value, int cluster = 0);
  static Expr mbarrier_test(uint32_t array, Expr index, Expr parity);
  static Expr matrix_element(uint32_t matrix, int element);
  bool operator==(const Expr&) const = default;
};

// X(enumerator, spelling)
#define TILERT_SIMT_STMT_KINDS(X)                                                              \
  X(kAssign, "assign")        /* id: variable; operands [value] or [index, value] for a        \
                                 private array */                                              \
  X(kStore, "store")          /* space, id: array; operands [index, value] */                  \
  X(kAtomicAdd, "atomic_add") /* space (global or shared), id: array; operands [index, value];  \
                                 element types i32, u32, f32 */                                 \
  X(kIf, "if")                /* operands [condition]; body, else_body */                      \
  X(kFor, "for")              /* id: i32 loop variable; operands [begin, end, step]; body.     \
                                 `for (v = begin; v < end; v += step)`, step > 0; begin and end \
                                 are evaluated once; unroll: bounds are constants, unroll fully */ \
  X(kWhile, "while")          /* operands [condition], evaluated before every iteration; body */ \
  X(kBarrier, "barrier")      /* barrier kind; operands [id, thread count] for named ones */   \
  X(kReturn, "return")        /* the thread ends (in uniform control flow only) */             \
  X(kMatrixFill, "matrix_fill")  /* id: matrix; operands [value]: every element of it */        \
  X(kMatrixLoad, "matrix_load")  /* id: matrix (use A or B); space (shared; global for       \
                                    workgroup-scope matrices), array: the array; operands     \
                                    [offset, stride]: element (r, c) is                       \
                                    array[offset + r * stride + c] (row-major), or with a = 1 \
                                    array[offset + c * stride + r] (column-major). Global:    \
                                    offset and stride are multiples of 16 bytes */            \
  X(kMatrixStore, "matrix_store") /* id: matrix (accumulator); space (shared; global for       \
                                     workgroup-scope matrices), array; operands [offset,       \
                                     stride] as for matrix_load. A global array of f16 or bf16 \
                                     gets the f32 elements rounded to nearest even */           \
  X(kMatrixTensorLoad, "matrix_tensor_load") /* a workgroup-scope A or B matrix from a window \
                                     of a row-major 2-D global tensor: id: matrix; space       \
                                     global, array; operands [row0, col0, rows, cols, stride]  \
                                     (i32): element (r, c) is array[(row0 + r) * stride + col0 \
                                     + c] where row0 + r < rows and col0 + c < cols, else 0.   \
                                     No alignment asked (TargetDescription::workgroup_matrices \
                                     .tensor_addressing) */                                     \
  X(kMatrixTensorStore, "matrix_tensor_store") /* a workgroup-scope accumulator into such a   \
                                     window: id: matrix; space global, array; operands as for  \
                                     matrix_tensor_load; only the elements inside the tensor   \
                                     are written, rounded as for matrix_store */               \
  X(kMatrixMulAdd, "matrix_mul_add") /* id: accumulator C; a, b: matrices of use A and B;      \
                                        C = A * B + C */                                       \
  X(kMatrixElementStore, "matrix_element_store") /* id: accumulator; a: element k of the      \
                                                    lane's share (see matrix_element);       \
                                                    operands [value] (f32) */                \
  X(kMatrixConvert, "matrix_convert") /* id: matrix of use A (f16 / bf16); a: accumulator;     \
                                         every element of the accumulator, rounded to the A    \
                                         matrix's type (to nearest even), becomes the same     \
                                         element of the A matrix (PTX only: its accumulator    \
                                         registers pair into A registers) */                   \
  X(kAsyncCopy, "async_copy") /* id: shared array (destination), array: global array (source,  \
                                 same element type); a: bytes (16); operands [shared index,     \
                                 global index] in elements, both 16-byte aligned. Completes     \
                                 asynchronously: see async_commit / async_wait */               \
  X(kChunkLoad, "chunk_load")  /* 16 bytes of a global array into registers: id: private u32   \
                                  array (the chunk registers); array: global array; operands    \
                                  [first word in the private array (a constant multiple of 4),  \
                                  global element index (16-byte aligned, the 16 bytes inside    \
                                  the array)]. For targets without async_copy: the copy's two   \
                                  halves can then sit on either side of other work */           \
  X(kChunkStore, "chunk_store") /* the 16 bytes of 4 words of a private u32 array into a shared \
                                  array: id: shared array; array: the private array; operands   \
                                  [shared element index (16-byte aligned), first word (a        \
                                  constant multiple of 4)]. Every matrix_load from an array     \
                                  that chunk_store writes has an offset and a stride that are   \
                                  multiples of 16 bytes, so emitters may lay such arrays out as \
                                  vectors */                                                     \
  X(kAsyncCommit, "async_commit") /* closes the thread's group of async copies issued so far */ \
  X(kAsyncWait, "async_wait")     /* a: waits until at most `a` of the thread's committed      \
                                     groups are still in flight (their writes then visible to  \
                                     the thread; a workgroup barrier shares them) */ \
  X(kProxyFence, "proxy_fence")   /* the thread's shared-memory writes become visible to the   \
                                     asynchronous proxy (warpgroup_mma operand reads) once a   \
                                     following barrier is passed */                             \
  X(kWarpgroupFence, "warpgroup_fence") /* orders earlier accumulator register writes before   \
                                           the warpgroup_mma statements that follow */          \
  X(kWarpgroupMma, "warpgroup_mma") /* 4 subgroups of 32 (a warpgroup) together: D[64 x N] +=  \
                                     A[64 x 16] * B[16 x N], N = 16 a. id: the first of `a`   \
                                     consecutive accumulators, this subgroup's rows 16 w .. of \
                                     D (w: subgroup index in its warpgroup); b: shared array  \
                                     of B; space kShared: array is the shared array of A;      \
                                     space kPrivate: array is an A matrix, the subgroup's 16   \
                                     rows of A (A operand fields unused); operands [A offset,  \
                                     A leading byte offset, A stride byte offset, B offset, B  \
                                     leading, B stride (, A swizzle, B swizzle (, B K-major))]: \
                                     offsets in elements of the operand's start, the byte      \
                                     offsets and swizzle widths (0 none, 32, 64, 128 bytes) as \
                                     the wgmma matrix descriptor has them. A is K-major; B     \
                                     N-major (stored k x n), or K-major (n x k) when the last  \
                                     operand is 1. Asynchronous: see warpgroup_commit / _wait */ \
  X(kWarpgroupCommit, "warpgroup_commit") /* closes the group of warpgroup_mma issued so far */ \
  X(kWarpgroupWait, "warpgroup_wait")  /* a: waits until at most `a` committed groups are in    \
                                          flight; their accumulators may then be read */        \
  X(kMbarrierInit, "mbarrier_init") /* id: shared array of hardware mbarriers (i64 elements);  \
                                       operands [index, arrivals]: phase 0 begins expecting    \
                                       `arrivals`; visible to other threads and to tensor      \
                                       copies after a following workgroup barrier */           \
  X(kMbarrierExpectTx, "mbarrier_expect_tx") /* id: mbarrier array; operands [index, bytes]: one \
                                                arrival, and `bytes` more transaction bytes the \
                                                phase waits for (tensor copies complete them)  */ \
  X(kMbarrierArriveAsync, "mbarrier_arrive_async") /* id: mbarrier array; operands [index]: one \
                                                      arrival, made once every async_copy the  \
                                                      thread issued before completes (PTX      \
                                                      cp.async.mbarrier.arrive.noinc) */       \
  X(kTensorCopy, "tensor_copy") /* the tensor-copy engine (TMA) copies one box of a global     \
                                   tensor into shared memory: id: shared destination array;    \
                                   a: Function::tensor_maps index; array: mbarrier array;      \
                                   operands [destination offset (elements), mbarrier index,    \
                                   box origin coordinates, innermost dimension first (i32, may \
                                   lie outside the tensor: those elements read zero)]. The box \
                                   lands as the map's swizzle lays it out and completes its    \
                                   bytes on the mbarrier. Issued by one thread. */

enum class StmtKind : uint8_t {
#define TILERT_X(e, s) e,
  TILERT_SIMT_STMT_KINDS(TILERT_X)
#undef TILERT_X
};
std::string_view stmt_kind_name(StmtKind k);

// kWorkgroup and kSubgroup also order the memory of their scope (shared memory for a workgroup
// barrier, acquire-release): a store before the barrier is visible to every participant after it.
// kNamed waits until `thread count` threads reached barrier `id`; kNamedArrive counts the thread
// and does not wait (PTX bar.sync / bar.arrive; targets without named barriers never see them).
// kCluster: every thread of every block in the thread-block cluster (which includes the
// workgroup), with release / acquire ordering of memory at cluster scope.
enum class BarrierKind : uint8_t { kWorkgroup, kSubgroup, kNamed, kNamedArrive, kCluster };
std::string_view barrier_kind_name(BarrierKind k);

struct Stmt;
using Body = std::vector<Stmt>;

struct Stmt {
  StmtKind kind = StmtKind::kAssign;
  uint32_t id = 0;
  uint32_t array = 0;       // matrix_load / matrix_store: the array (in `space`)
  uint32_t a = 0, b = 0;    // matrix_mul_add: the A and B matrices; async_copy / async_wait: a
  Space space = Space::kPrivate;
  BarrierKind barrier = BarrierKind::kWorkgroup;
  bool unroll = false;
  std::vector<Expr> operands;
  Body body, else_body;
  std::string comment;  // what tile op this came from; emitters may print it
  bool operator==(const Stmt&) const = default;
};

// A kernel parameter: a global array (tensor) or a scalar, in the tile kernel's signature order,
// followed by the lowering's own parameters (the status record).
struct Param {
  std::string name;
  bool is_array = false;
  DType type = DType::kI32;   // element type of an array; the scalar's type
  bool written = false;       // arrays: the kernel may store to it
};

struct Variable {             // a private scalar (count 0) or private array (count elements)
  std::string name;
  DType type = DType::kI32;
  int32_t count = 0;
};

// Matrix fragments (tensor cores, cooperative matrices): a rows x cols tile held jointly by the
// lanes of one subgroup, in a layout only the emitter knows. Every lane of the subgroup executes
// each matrix statement with the same operands (uniform control flow within the subgroup), and
// the subgroup size is the target's one fixed size (the lowering uses them only then).
// Supported now: A 16x16 (M x K) and B 16x16 (K x N) of f16 or bf16, accumulators 16x16 f32. An
// emitter lowers matrix_mul_add to its matrix instruction (PTX: two mma.sync.m16n8k16; SPIR-V:
// OpCooperativeMatrixMulAddKHR on 16x16x16 cooperative matrices).
enum class MatrixUse : uint8_t { kA, kB, kAccumulator };
std::string_view matrix_use_name(MatrixUse u);

// Workgroup-scope matrices (TargetDescription::workgroup_matrices; SPIR-V with
// SPV_NV_cooperative_matrix2) are held jointly by every invocation of the workgroup instead: any
// rows x cols the target's granularity allows; every thread executes each statement on them with
// the same operands (control flow uniform across the workgroup). The driver stages their
// operands through shared memory of its own, so loads read global arrays directly.
enum class MatrixScope : uint8_t { kSubgroup, kWorkgroup };

struct MatrixVariable {
  std::string name;
  MatrixUse use = MatrixUse::kAccumulator;
  DType type = DType::kF32;   // element type
  int32_t rows = 16, cols = 16;
  MatrixScope scope = MatrixScope::kSubgroup;
};

// A tensor map (CUDA tensor-map descriptor) the runtime builds at launch for one global array
// parameter: the tensor's dims and row strides from the launch's shapes (row-major, contiguous),
// the box and swizzle from here. The PTX entry takes the encoded maps as 128-byte parameters after
// Function::params, in this order. A map that cannot be encoded (an address or row length not a
// multiple of 16 bytes) makes the runtime pass 0 in Function::tensor_maps_param, and the kernel
// then takes its other copy path.
struct TensorMap {
  uint32_t param = 0;                  // the global array parameter (its element type)
  int32_t rank = 2;                    // the tensor's dimensions, 1..5
  std::array<int32_t, 5> box = {};     // box extents in elements, innermost dimension first
  int32_t swizzle = 0;                 // 0 (none), 32, 64 or 128 bytes
  bool operator==(const TensorMap&) const = default;
};

struct SharedArray {
  std::string name;
  DType type = DType::kF32;
  int64_t count = 0;          // elements
  // Byte alignment of the array's start in the block's shared memory: 16, or the 1024 (512, 256)
  // a 128-byte (64, 32) swizzled tile's repeating pattern needs (wgmma descriptors, base offset 0).
  int64_t align = 16;
  int64_t bytes() const { return count * dtype_size(type); }
};

// The status record a kernel writes when it stops itself (a deadlock in the emulated
// synchronization, see lowering/README.md). A u32 array parameter of kStatusWords words, zeroed
// by the runtime before the launch and read after it.
inline constexpr int kStatusWords = 4;
enum class StatusCode : uint32_t {
  kOk = 0,
  kDeadlock = 1,  // [1] stuck waits (SyncSite indices: first | second << 16, 0xffff none),
                  // [2] workgroup id y, [3] workgroup id x
};

// A wait the status record or a sync profile can name: which barrier and which role waited there.
struct SyncSite {
  std::string barrier;  // "mbarrier full", "named barrier"
  std::string role;     // "producer", or "block" outside roles
  uint32_t line = 0;
};

// One timeline lane of a sync profile: a subgroup ("warp 3", its barrier waits) or a role of the
// merged schedule ("producer": the time it could not proceed).
struct ProfileLane {
  std::string name;
  bool is_role = false;
  int64_t first_thread = 0, threads = 0;
  bool operator==(const ProfileLane&) const = default;
};

struct Function {
  std::string name;
  int32_t threads = 0;               // workgroup size (x only)
  std::array<int32_t, 3> cluster = {1, 1, 1};  // blocks per thread-block cluster (all 1: none)
  bool has_cluster() const { return cluster[0] * cluster[1] * cluster[2] > 1; }
  std::vector<Param> params;
  std::vector<Variable> variables;
  std::vector<SharedArray> shared;
  std::vector<MatrixVariable> matrices;  // ids of the matrix statements
  Body body;
  int32_t status_param = -1;         // index of the status record parameter; -1: none
  std::vector<SyncSite> sync_sites;  // indexed by the status record's barrier word
  // The sync profile record (lowering/sync_profile.h), when lowered with profiling: the u32 array
  // parameter's index (-1: none) and its lanes: one per subgroup, then one per scheduled role.
  int32_t profile_param = -1;
  std::vector<ProfileLane> profile_lanes;
  bool uses_subgroup_ops = false;    // subgroup builtins, reductions or barriers appear
  // Tensor maps the kernel's tensor_copy statements read, and the u32 scalar parameter through
  // which the runtime says whether it could encode all of them (1) or not (0); -1: none.
  std::vector<TensorMap> tensor_maps;
  int32_t tensor_maps_param = -1;
  bool uses_matrices() const { return !matrices.empty(); }

  int64_t shared_bytes() const;
  // Byte offset of every shared array in one block of shared memory, each at its alignment, in
  // declaration order; shared_bytes() is where the last one ends.
  std::vector<int64_t> shared_offsets() const;
};

// A readable listing of `f` (for `tilert lower --target simt` and test failures).
std::string print(const Function& f);

}  // namespace tilert::simt
