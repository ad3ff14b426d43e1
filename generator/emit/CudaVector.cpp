// Vectorized element-wise parallel loops (passes/VectorParallel, LayoutPlan::loop_vectors;
// docs/cuda-backend.md "Vectorized parallel loops"). Each thread runs `width` consecutive
// points of the innermost variable j per run: the run's vector loads first (one 4-, 8- or
// 16-byte shared load per piece), then the points (unrolled; a vector-loaded value is element
// r >> s of its vector), each point's stored value kept in a register array, then one vector
// store per piece. Index arithmetic is 32-bit where the range analysis proves every
// intermediate value lies in [0, 2^31): the loop's variables are `int`, shared offsets
// unsigned.
#include "emit/CudaEmitter.h"

#include "ir/IRVisitor.h"
#include "passes/LayoutInference.h"
#include "passes/RangeAnalysis.h"
#include "passes/VectorParallel.h"
#include "support/InternalError.h"

#include <limits>

namespace tilegen::emit {

using namespace ir;

namespace {

// The loads of a parallel body in program order (let values, store indices and values).
std::vector<const Load*> body_loads(const Stmt& body) {
  struct Loads : IRVisitor {
    std::vector<const Load*> out;
    void visit_Load(const Load* l) override {
      out.push_back(l);
      IRVisitor::visit_Load(l);
    }
  } v;
  v.visit(body);
  return v.out;
}

const char* piece_type(int64_t bytes) {
  switch (bytes) {
  case 16: return "uint4";
  case 8: return "uint2";
  case 4: return "uint32_t";
  case 2: return "uint16_t";
  default: return "uint8_t";
  }
}

// Every intermediate value of an integer expression in [0, 2^31): e rebuilt in u32 (unsigned
// division by a positive constant is a shift, and no sign extension is needed), else null.
// Leaves and anything the rules do not cover become a u32 cast of the 64-bit value, which is
// exact by the same bound.
Expr narrow_u32(const Expr& e, const passes::RangeEnv& env) {
  if (!e->type.is_int())
    return nullptr;
  const passes::Interval r = passes::bounds_of(e, env);
  if (!r.bounded() || *r.lo < 0 || *r.hi > std::numeric_limits<int32_t>::max())
    return nullptr;
  if (auto* i = e->as<IntImm>())
    return IntImm::make(DType::u32(), i->value);
  if (auto* b = e->as<Binary>()) {
    switch (b->op) {
    case BinaryOp::Add: case BinaryOp::Sub: case BinaryOp::Mul: case BinaryOp::Div:
    case BinaryOp::Mod: case BinaryOp::Min: case BinaryOp::Max: case BinaryOp::Shr:
    case BinaryOp::BitAnd: {
      Expr a = narrow_u32(b->a, env), c = narrow_u32(b->b, env);
      const bool divides = b->op != BinaryOp::Div && b->op != BinaryOp::Mod;
      const passes::Interval rc = passes::bounds_of(b->b, env);
      if (a && c && (divides || (rc.lo && *rc.lo > 0)))
        return Binary::make(b->op, a, c);
      break;
    }
    default: break;
    }
  }
  if (e->type == DType::u32())
    return e;
  return Cast::make(DType::u32(), e);
}

} // namespace

std::string CudaEmitter::index32(const Expr& e) {
  if (Expr n = narrow_u32(e, ranges_))
    return expr(n);
  return expr(e);
}

// A piece of `bytes` (a power of two up to 16, aligned to its size) is contiguous in b: an
// XOR swizzle permutes whole 16-byte chunks, and a column panel (plan_hopper) is a whole
// number of them wide.
void CudaEmitter::check_vector_piece(const Buffer& b, int64_t bytes) const {
  const auto pan = plan_.panels.find(&b);
  TG_ASSERT(bytes <= 16 && (pan == plan_.panels.end() || (pan->second * b.dtype.bytes()) % 16 == 0),
            "CUDA emitter: a vector piece of " + std::to_string(bytes) + " bytes in shared '" +
                b.name + "' is not contiguous");
}

bool CudaEmitter::vector_layout_ok(const layout::FragmentLayout& L, size_t d, int64_t w) const {
  if (L.regs[d].empty() || L.regs[d][0].size != w || L.regs[d][0].stride != 1)
    return false;
  for (size_t m = 1; m < L.regs[d].size(); ++m)
    if (L.regs[d][m].stride % w != 0)
      return false;
  for (const auto& t : L.thread_modes)
    if (t.stride[d] % w != 0)
      return false;
  return true;
}

void CudaEmitter::emit_parallel_vector(const Parallel* p, const layout::FragmentLayout& L,
                                       int64_t w) {
  const passes::ParallelVectorPlan plan =
      passes::plan_parallel_vector(*p, t_.gpu.parallel_vector_bytes, w);
  const size_t last = p->vars.size() - 1;
  TG_ASSERT(plan.width == w && vector_layout_ok(L, last, w),
            "CUDA emitter: the vectorized parallel loop at line " + std::to_string(p->loc.line) +
                " does not match its layout " + L.str());
  store_leader_ = replica_leader(L);
  narrow_indices_ = true;
  open("");
  line("// " + std::to_string(w) + " consecutive points of '" + p->vars[last]->name +
       "' per thread and run: vector loads and stores of shared memory (passes/VectorParallel)");
  for (size_t v = 0; v < p->vars.size(); ++v)
    line("const int tg_t_" + name(p->vars[v]->name) + " = " + thread_coord(L, v) + ";");
  for (size_t v = 0; v < last; ++v) {
    const std::string c = "tg_r_" + name(p->vars[v]->name);
    const int64_t R = L.regs_of_dim(v);
    line(R <= kMaxUnrolledParallelPoints ? "#pragma unroll" : "#pragma unroll 1");
    open("for (int " + c + " = 0; " + c + " < " + std::to_string(R) + "; ++" + c + ")");
    line("const int " + name(p->vars[v]->name) + " = tg_t_" + name(p->vars[v]->name) + " + " +
         reg_coord(L, v, c) + ";");
    line("(void)" + name(p->vars[v]->name) + ";");
  }
  const std::string j = name(p->vars[last]->name);
  const std::string q = "tg_q_" + j, r = "tg_r_" + j, j0 = "tg_" + j + "0";
  const int64_t runs = L.regs_of_dim(last) / w;
  line(runs <= kMaxUnrolledParallelPoints ? "#pragma unroll" : "#pragma unroll 1");
  open("for (int " + q + " = 0; " + q + " < " + std::to_string(runs) + "; ++" + q + ")");
  line("const int " + j0 + " = tg_t_" + j + " + " +
       reg_coord(L, last, "(" + q + " * " + std::to_string(w) + ")") + "; // the run's first '" +
       p->vars[last]->name + "'");
  // Lets of the row (no j, no load): once per run, before the vector loads that use them.
  const Stmt& body = p->body;
  const std::vector<Stmt> stmts = body->as<Seq>() ? body->as<Seq>()->stmts : std::vector<Stmt>{body};
  for (const Stmt& s : stmts)
    if (auto* l = s->as<LetStmt>(); l && plan.row_lets.count(l->var.get())) {
      line("const " + type_name(l->var->type) + " " + name(l->var->name) + " = " + expr(l->value) +
           ";");
      dead_lets_.insert(l->var.get());
    }
  // Vector loads, in program order; equal addresses share one vector.
  std::map<std::string, std::string> by_address;
  for (const Load* l : body_loads(body)) {
    auto it = plan.loads.find(l);
    if (it == plan.loads.end())
      continue;
    const int s = it->second;
    const Buffer& b = *l->buffer;
    const int64_t n = s >= 62 ? 1 : std::max<int64_t>(1, w >> s);
    const std::string row = l->indices.size() >= 2 ? index32(l->indices[l->indices.size() - 2]) : "0";
    const std::string col = s == 0 ? j0 : "(" + j0 + " >> " + std::to_string(s) + ")";
    const std::string base = shared_ptr(&b);
    const std::string key = base + "|" + row + "|" + col + "|" + std::to_string(n);
    std::string arr;
    if (auto a = by_address.find(key); a != by_address.end()) {
      arr = a->second;
    } else {
      arr = "tg_vl" + std::to_string(by_address.size());
      by_address[key] = arr;
      const int64_t eb = b.dtype.bytes(), total = n * eb, piece = std::min<int64_t>(total, 16);
      check_vector_piece(b, piece);
      line("alignas(16) " + storage_type_name(b.dtype) + " " + arr + "[" + std::to_string(n) +
           "]; // " + name(b.name) + ": " + std::to_string(n) + " element(s) from " +
           (s == 0 ? "the run's first" : "(the run's first >> " + std::to_string(s) + ")"));
      for (int64_t k = 0; k < total / piece; ++k) {
        const std::string c = k == 0 ? col : col + " + " + std::to_string(k * piece / eb);
        line("*reinterpret_cast<" + std::string(piece_type(piece)) + "*>(&" + arr + "[" +
             std::to_string(k * piece / eb) + "]) = *reinterpret_cast<const " + piece_type(piece) +
             "*>(&" + base + "[" + shared_offset(&b, row, c) + "]);");
      }
    }
    const std::string elem = n == 1 ? "0" : s == 0 ? r : "(" + r + " >> " + std::to_string(s) + ")";
    vector_loads_[l] = to_float(arr + "[" + elem + "]", b.dtype);
  }
  // One register array per store: the run's values, stored as vectors after the points.
  std::vector<const Store*> stores;
  for (const Stmt& s : stmts)
    if (auto* st = s->as<Store>(); st && plan.stores.count(st)) {
      const std::string arr = "tg_vs" + std::to_string(stores.size());
      line("alignas(16) " + storage_type_name(st->buffer->dtype) + " " + arr + "[" +
           std::to_string(w) + "]; // the run's values of " + name(st->buffer->name));
      vector_stores_[st] = arr + "[" + r + "]";
      stores.push_back(st);
    }
  line("#pragma unroll");
  open("for (int " + r + " = 0; " + r + " < " + std::to_string(w) + "; ++" + r + ")");
  line("const int " + j + " = " + j0 + " + " + r + ";");
  line("(void)" + j + ";");
  parallel_body(body);
  close();
  for (size_t k = 0; k < stores.size(); ++k) {
    const Store* st = stores[k];
    const Buffer& b = *st->buffer;
    const std::string arr = "tg_vs" + std::to_string(k);
    const std::string row = st->indices.size() >= 2 ? index32(st->indices[st->indices.size() - 2]) : "0";
    const int64_t eb = b.dtype.bytes(), total = w * eb, piece = std::min<int64_t>(total, 16);
    check_vector_piece(b, piece);
    const std::string base = shared_ptr(&b);
    for (int64_t c = 0; c < total / piece; ++c) {
      const std::string col = c == 0 ? j0 : j0 + " + " + std::to_string(c * piece / eb);
      line((store_leader_.empty() ? "" : "if (" + store_leader_ + ") ") + "*reinterpret_cast<" +
           piece_type(piece) + "*>(&" + base + "[" + shared_offset(&b, row, col) +
           "]) = *reinterpret_cast<const " + piece_type(piece) + "*>(&" + arr + "[" +
           std::to_string(c * piece / eb) + "]);");
    }
  }
  close(); // runs
  for (size_t v = 0; v < last; ++v)
    close();
  close();
  store_leader_.clear();
  dead_lets_.clear();
  vector_loads_.clear();
  vector_stores_.clear();
  narrow_indices_ = false;
}

} // namespace tilegen::emit
