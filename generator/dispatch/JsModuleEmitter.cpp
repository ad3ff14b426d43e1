// The ES module, its .d.ts and the JSON manifest of a library's WGSL variants. The module is
// a fixed runtime part (argument checks, pipeline cache, dispatch; kRuntime below) plus one
// table of variants and one exported function per kernel x type binding.
#include "dispatch/JsModuleEmitter.h"

#include "dispatch/DispatchExpr.h"
#include "dispatch/Naming.h"
#include "ir/IRPrinter.h"
#include "ir/Simplify.h"
#include "support/InternalError.h"
#include "support/TextEscape.h"

#include <algorithm>
#include <map>

namespace tilegen::dispatch {

using namespace ir;

std::string js_module_file_name(const std::string& lib) { return lib + ".js"; }
std::string js_types_file_name(const std::string& lib) { return lib + ".d.ts"; }
std::string wgsl_manifest_file_name(const std::string& lib) { return lib + ".wgsl.json"; }

namespace {

// A JSON / JavaScript string literal (the same text in both languages).
std::string quote(const std::string& s) { return json_string(s); }

// Generated text (a WGSL variant's source, whose spec text its emitter escaped) as a template
// literal, byte for byte.
std::string template_literal(const std::string& s) {
  std::string o = "`";
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '`' || s[i] == '\\' || (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '{'))
      o += '\\';
    o += s[i];
  }
  return o + "`";
}

std::string list(const std::vector<std::string>& v, bool quoted) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + (quoted ? quote(v[i]) : v[i]);
  return s + "]";
}

int element_bytes(DType t) { return t.bytes(); }

std::string ts_type(DType t) { return t.is_float() || t.is_int() ? "number" : "boolean"; }

// The instance key as the module computes it: the instance name (type suffix, then
// <flag><0|1> and <param><value> in enumerate_instances order).
std::string instance_key_js(const Kernel& k) {
  std::string s = quote(k.type_suffix());
  bool first = k.type_suffix().empty();
  for (const auto& f : k.flags) {
    s += " + " + quote((first ? "" : "_") + f->name) + " + f_" + f->name;
    first = false;
  }
  for (const auto& d : k.dims)
    if (d.var->kind == VarKind::ValueParam) {
      s += " + " + quote((first ? "" : "_") + d.var->name) + " + d." + d.var->name;
      first = false;
    }
  return s;
}

std::string shape_text(const BufferPtr& t) {
  std::string s = "[";
  for (size_t i = 0; i < t->shape.size(); ++i)
    s += (i ? ", " : "") + to_string(t->shape[i]);
  return s + "] " + t->dtype.name();
}

std::string elements_js(const BufferPtr& t) {
  std::string s;
  for (const auto& e : t->shape)
    s += (s.empty() ? "" : " * ") + std::string("(") + js_expr(e, "d") + ")";
  return s.empty() ? "1" : s;
}

// The fixed part of the module.
const char* kRuntime = R"JS(
const STORAGE = 0x80, UNIFORM = 0x40, COPY_DST = 0x8, COMPUTE = 0x4;
const I32_MAX = 2147483647;

/** Thrown for bad arguments, shapes a variant cannot take, or a device no variant runs on. */
export class TilegenError extends Error {
  constructor(status, message) {
    super(message);
    this.name = 'TilegenError';
    this.status = status; // 'invalid-argument' | 'unsupported-shape' | 'no-variant'
  }
}

function fail(status, fn, msg) {
  throw new TilegenError(status, `${fn}: ${msg}`);
}

// Integer arithmetic of shapes, grids and requirements (docs/spec.md "Operators and typing"):
// floor division and modulo for every divisor (a / 0 = 0, a % 0 = a, cdiv(a, 0) = 0), and
// exact: a value past 2^53, which a double cannot hold exactly, is refused.
function exact(r) {
  if (!Number.isSafeInteger(r))
    throw new TilegenError('unsupported-shape', `integer arithmetic of a shape or grid reached ${r}, past 2^53`);
  return r;
}
function iadd(a, b) { return exact(a + b); }
function isub(a, b) { return exact(a - b); }
function imul(a, b) { return exact(a * b); }
function idiv(a, b) { return b === 0 ? 0 : exact(Math.floor(a / b)); }
function imod(a, b) {
  if (b === 0) return a;
  const r = a % b;
  return r !== 0 && (r < 0) !== (b < 0) ? r + b : r;
}
function icdiv(a, b) { return b === 0 ? 0 : exact(Math.ceil(a / b)); }

// One pipeline per device and variant (and a second with the override tg_folded for grids
// over the device's workgroups per dimension), created on first use (a failed creation is
// retried).
const pipelines = new WeakMap();
function pipelineFor(device, v, folded) {
  let perDevice = pipelines.get(device);
  if (!perDevice) {
    perDevice = new Map();
    pipelines.set(device, perDevice);
  }
  const key = folded ? `${v.name} folded` : v.name;
  let p = perDevice.get(key);
  if (!p) {
    p = (async () => {
      const module = device.createShaderModule({ label: v.name, code: SHADERS[v.name] });
      const entries = [{ binding: 0, visibility: COMPUTE, buffer: { type: 'uniform' } }];
      v.bindings.forEach((type, i) => entries.push({ binding: i + 1, visibility: COMPUTE, buffer: { type } }));
      const bindGroupLayout = device.createBindGroupLayout({ label: v.name, entries });
      const layout = device.createPipelineLayout({ label: v.name, bindGroupLayouts: [bindGroupLayout] });
      const compute = { module, entryPoint: v.entry };
      if (folded) compute.constants = { tg_folded: 1 };
      const pipeline = await device.createComputePipelineAsync({ label: key, layout, compute });
      return { pipeline, bindGroupLayout };
    })();
    perDevice.set(key, p);
    p.catch(() => perDevice.delete(key));
  }
  return p;
}

function checkDevice(fn, device, args) {
  if (!device || typeof device.createComputePipelineAsync !== 'function')
    fail('invalid-argument', fn, 'the first argument must be a GPUDevice');
  if (!args || typeof args !== 'object') fail('invalid-argument', fn, 'the second argument must be an object of arguments');
}

function checkKeys(fn, args, known) {
  for (const key of Object.keys(args))
    if (!known.includes(key)) fail('invalid-argument', fn, `unknown argument '${key}' (arguments: ${known.join(', ')})`);
}

function checkDim(fn, name, v, c) {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
    fail('invalid-argument', fn, `${name} must be an integer >= 0 (got ${v})`);
  if (v > I32_MAX) fail('unsupported-shape', fn, `${name} = ${v} is over 2^31 - 1 (WGSL indexes in i32)`);
  if (c.values && !c.values.includes(v)) fail('unsupported-shape', fn, `${name} = ${v} is not one of ${c.values.join(', ')}`);
  if (c.min !== undefined && v < c.min) fail('unsupported-shape', fn, `${name} = ${v} is below its minimum ${c.min}`);
  if (c.max !== undefined && v > c.max) fail('unsupported-shape', fn, `${name} = ${v} is above its maximum ${c.max}`);
  if (c.multiple_of !== undefined && v % c.multiple_of !== 0)
    fail('unsupported-shape', fn, `${name} = ${v} is not a multiple of ${c.multiple_of}`);
  return v;
}

function checkFlag(fn, name, v) {
  if (v === true || v === 1) return 1;
  if (v === false || v === 0 || v === undefined) return 0;
  fail('invalid-argument', fn, `flag ${name} must be a boolean (got ${v})`);
}

function checkScalar(fn, name, v, isInt) {
  if (typeof v !== 'number' || !Number.isFinite(v)) fail('invalid-argument', fn, `${name} must be a finite number (got ${v})`);
  if (isInt && (!Number.isInteger(v) || v < -I32_MAX - 1 || v > I32_MAX))
    fail('invalid-argument', fn, `${name} must be an i32 (got ${v})`);
  return isInt ? v : Math.fround(v); // what the kernel reads (a scalar's require checks this)
}

// A tensor argument: a GPUBuffer with STORAGE usage holding at least the tensor's bytes
// (16-bit and 8-bit tensors are read as u32 words: their size rounds up to 4 B; a binding is
// at least 4 B, even for an empty tensor).
function checkTensor(fn, device, name, buf, elements, elemBytes, what) {
  if (!buf || typeof buf.size !== 'number' || typeof buf.usage !== 'number')
    fail('invalid-argument', fn, `${name} must be a GPUBuffer`);
  if ((buf.usage & STORAGE) === 0) fail('invalid-argument', fn, `${name} was not created with GPUBufferUsage.STORAGE`);
  if (elements > I32_MAX) fail('unsupported-shape', fn, `${name} (${what}) has ${elements} elements, over 2^31 - 1`);
  const bytes = Math.max(4, Math.ceil((elements * elemBytes) / 4) * 4);
  if (buf.size < bytes) fail('invalid-argument', fn, `${name} (${what}) needs ${bytes} B, the buffer holds ${buf.size} B`);
  if (bytes > device.limits.maxStorageBufferBindingSize)
    fail('unsupported-shape', fn, `${name} needs ${bytes} B, over the device's maxStorageBufferBindingSize (${device.limits.maxStorageBufferBindingSize})`);
  return { name, buf, bytes, elements };
}

function checkAliasing(fn, v, tensors) {
  for (let i = 0; i < tensors.length; ++i)
    for (let j = i + 1; j < tensors.length; ++j)
      if (tensors[i].buf === tensors[j].buf && (v.bindings[i] === 'storage' || v.bindings[j] === 'storage'))
        fail('invalid-argument', fn, `${tensors[i].name} and ${tensors[j].name} are the same buffer, and one is written`);
}

function pick(fn, device, variants, key) {
  if (!variants) fail('unsupported-shape', fn, `no variant was generated for instance ${key}`);
  for (const v of variants) if (v.features.every((f) => device.features.has(f))) return v;
  fail('no-variant', fn, `no variant of instance ${key} runs on this device (targets: ${variants.map((v) => `${v.target} [${v.features.join(', ')}]`).join(', ')})`);
}

// The workgroups of a grid with an extent over the device's limit, folded: the shader numbers
// them x fastest across the dispatch and decodes the grid's (x, y, z) (tg_folded, docs/wgsl.md).
function foldGrid(fn, grid, lim) {
  const total = grid[0] * grid[1] * grid[2];
  if (total > I32_MAX) fail('unsupported-shape', fn, `a grid of ${grid.join(' x ')} workgroups has more than 2^31 - 1`);
  const x = Math.min(total, lim), y = Math.min(Math.ceil(total / x), lim), z = Math.ceil(total / (x * y));
  if (z > lim) fail('unsupported-shape', fn, `a grid of ${grid.join(' x ')} workgroups does not fold into the device's ${lim} per dimension`);
  return [x, y, z];
}

async function dispatch(fn, device, v, tensors, params, grid) {
  checkAliasing(fn, v, tensors);
  const result = { variant: v.name, target: v.target, workgroups: grid, dispatched: false, folded: false };
  if (grid.some((g) => g <= 0)) return result; // an empty problem: nothing to run
  // No tensor it writes has an element: nothing observable can happen, whatever the grid.
  if (tensors.every((t, i) => v.bindings[i] !== 'storage' || t.elements === 0)) return result;
  const lim = device.limits.maxComputeWorkgroupsPerDimension;
  const folded = grid.some((g) => g > lim);
  if (folded) {
    result.workgroups = foldGrid(fn, grid, lim);
    result.folded = true;
  }
  const { pipeline, bindGroupLayout } = await pipelineFor(device, v, folded);
  const ub = device.createBuffer({ label: `${v.name} params`, size: params.byteLength, usage: UNIFORM | COPY_DST });
  device.queue.writeBuffer(ub, 0, params);
  const entries = [{ binding: 0, resource: { buffer: ub } }];
  tensors.forEach((t, i) => entries.push({ binding: i + 1, resource: { buffer: t.buf, offset: 0, size: t.bytes } }));
  const bindGroup = device.createBindGroup({ label: v.name, layout: bindGroupLayout, entries });
  const encoder = device.createCommandEncoder({ label: v.name });
  const pass = encoder.beginComputePass({ label: v.name });
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  pass.dispatchWorkgroups(result.workgroups[0], result.workgroups[1], result.workgroups[2]);
  pass.end();
  device.queue.submit([encoder.finish()]);
  ub.destroy(); // after submit: the queued dispatch keeps its contents
  result.dispatched = true;
  return result;
}
)JS";

} // namespace

std::string js_expr(const Expr& e, const std::string& d) {
  switch (e->kind) {
  case ExprKind::IntImm: return std::to_string(e->as<IntImm>()->value);
  case ExprKind::BoolImm: return e->as<BoolImm>()->value ? "true" : "false";
  case ExprKind::VarRef: {
    auto v = e->as<VarRef>()->var;
    TG_ASSERT(v->kind == VarKind::Dim || v->kind == VarKind::ValueParam,
              "js_expr: '" + v->name + "' is not a dim");
    return d + "." + v->name;
  }
  case ExprKind::Unary: {
    auto u = e->as<Unary>();
    return std::string(u->op == UnaryOp::Neg ? "-" : "!") + "(" + js_expr(u->a, d) + ")";
  }
  case ExprKind::Select: {
    auto s = e->as<Select>();
    return "(" + js_expr(s->cond, d) + " ? " + js_expr(s->t, d) + " : " + js_expr(s->f, d) + ")";
  }
  case ExprKind::Cast: return js_expr(e->as<Cast>()->value, d);
  case ExprKind::Binary: {
    auto b = e->as<Binary>();
    const std::string x = js_expr(b->a, d), y = js_expr(b->b, d);
    switch (b->op) {
    // integer arithmetic of the module's runtime part: exact, defined for every divisor
    case BinaryOp::Add: return "iadd(" + x + ", " + y + ")";
    case BinaryOp::Sub: return "isub(" + x + ", " + y + ")";
    case BinaryOp::Mul: return "imul(" + x + ", " + y + ")";
    case BinaryOp::Div: return "idiv(" + x + ", " + y + ")";
    case BinaryOp::Mod: return "imod(" + x + ", " + y + ")";
    case BinaryOp::CeilDiv: return "icdiv(" + x + ", " + y + ")";
    case BinaryOp::Min: return "Math.min(" + x + ", " + y + ")";
    case BinaryOp::Max: return "Math.max(" + x + ", " + y + ")";
    case BinaryOp::Eq: return "(" + x + " === " + y + ")";
    case BinaryOp::Ne: return "(" + x + " !== " + y + ")";
    default: return "(" + x + " " + binary_op_name(b->op) + " " + y + ")";
    }
  }
  default: break;
  }
  internal_error("js_expr: unsupported expression " + to_string(e));
}

std::string emit_js_module(const WgslLibrary& lib) {
  std::string s = "// ES module for the WGSL variants of tilegen library '" + lib.name +
                  "' (docs/wgsl.md).\n// Each export is `async fn(device, args)`: it checks the "
                  "arguments, picks the best variant the device\n// can run, creates its pipeline "
                  "once per device, and dispatches on device.queue (no wait).\n";
  s += kRuntime;
  s += "\nconst SHADERS = {\n";
  std::map<std::string, const std::string*> shaders; // sorted by name
  for (const auto& k : lib.kernels)
    for (const auto& v : k.variants)
      shaders[v.entry_point] = &v.source;
  for (const auto& [name, src] : shaders)
    s += "  " + quote(name) + ": " + template_literal(*src) + ",\n";
  s += "};\n";

  for (const auto& ki : lib.kernels) {
    const Kernel& k = *ki.kernel;
    const std::string fn = public_function_name(lib.name, k);
    // Variants by instance, best first.
    std::map<std::string, std::vector<const WgslVariantInfo*>> by_inst;
    for (const auto& v : ki.variants)
      by_inst[v.instance.name].push_back(&v);
    s += "\nconst VARIANTS_" + fn + " = {\n";
    for (auto& [inst, vs] : by_inst) {
      std::stable_sort(vs.begin(), vs.end(), [](auto* a, auto* b) {
        return a->target->preference > b->target->preference;
      });
      s += "  " + quote(inst) + ": [\n";
      for (const auto* v : vs) {
        std::string grid;
        for (size_t i = 0; i < 3; ++i)
          grid += (i ? ", " : "") + (i < v->grid.size() ? js_expr(simplify(v->grid[i]), "d") : std::string("1"));
        s += "    { name: " + quote(v->entry_point) + ", target: " + quote(v->target->name) +
             ", entry: " + quote(v->entry_point) + ", features: " + list(v->target->runtime_features, true) +
             ", bindings: " + list(v->layout.binding_types, true) + ",\n      grid: (d) => [" + grid + "] },\n";
      }
      s += "  ],\n";
    }
    s += "};\n";

    // The function.
    std::vector<std::string> keys;
    for (const auto& t : k.tensors)
      keys.push_back(t->name);
    for (const auto& d : k.dims)
      keys.push_back(d.var->name);
    for (const auto& v : k.scalars)
      keys.push_back(v->name);
    for (const auto& f : k.flags)
      keys.push_back(f->name);
    s += "\n/** " + k.name + (k.summary.empty() ? "" : ": " + js_comment(k.summary)) + " (spec " +
         js_comment(ki.spec_path) + ")";
    for (const auto& [p, t] : k.type_binding)
      s += ", " + p + " = " + t.name();
    s += ". */\nexport async function " + fn + "(device, args) {\n";
    s += "  const fn = " + quote(fn) + ";\n  checkDevice(fn, device, args);\n";
    s += "  checkKeys(fn, args, " + list(keys, true) + ");\n  const d = {};\n";
    for (const auto& dp : k.dims) {
      std::string c = "{";
      if (!dp.values.empty()) {
        std::vector<std::string> vals;
        for (auto v : dp.values)
          vals.push_back(std::to_string(v));
        c += " values: " + list(vals, false) + ",";
      }
      if (dp.min)
        c += " min: " + std::to_string(*dp.min) + ",";
      if (dp.max)
        c += " max: " + std::to_string(*dp.max) + ",";
      if (dp.multiple_of)
        c += " multiple_of: " + std::to_string(*dp.multiple_of) + ",";
      if (c.back() == ',')
        c.back() = ' ';
      c += "}";
      s += "  d." + dp.var->name + " = checkDim(fn, " + quote(dp.var->name) + ", args." + dp.var->name + ", " + c + ");\n";
    }
    for (const auto& f : k.flags)
      s += "  const f_" + f->name + " = checkFlag(fn, " + quote(f->name) + ", args." + f->name + ");\n";
    for (const auto& v : k.scalars)
      s += "  const s_" + v->name + " = checkScalar(fn, " + quote(v->name) + ", args." + v->name + ", " +
           (v->type.is_int() ? "true" : "false") + ");\n";
    for (const auto& r : k.scalar_requirements) {
      std::string vals;
      for (const ir::Var* v : require_scalars(r.pred))
        vals += v->name + " = ${s_" + v->name + "}, ";
      std::string where = ki.spec_path + (r.loc.line > 0 ? ":" + std::to_string(r.loc.line) : "");
      std::string rule = js_template_body(fold_whitespace(r.text) + " (" + where + ")");
      s += "  if (!" + js_require_expr(r.pred) + ")\n    fail('invalid-argument', fn, `" + vals +
           "but the kernel requires " + rule + "`);\n";
    }
    s += "  const key = " + instance_key_js(k) + ";\n";
    s += "  const v = pick(fn, device, VARIANTS_" + fn + "[key], key);\n";
    s += "  const tensors = [\n";
    for (const auto& t : k.tensors)
      s += "    checkTensor(fn, device, " + quote(t->name) + ", args." + t->name + ", " + elements_js(t) +
           ", " + std::to_string(element_bytes(t->dtype)) + ", " + quote(shape_text(t)) + "),\n";
    s += "  ];\n";
    const size_t fields = std::max<size_t>(1, k.dims.size() + k.scalars.size());
    s += "  const params = new ArrayBuffer(" + std::to_string((fields * 4 + 15) / 16 * 16) + ");\n";
    s += "  const view = new DataView(params);\n";
    size_t off = 0;
    for (const auto& dp : k.dims) {
      s += "  view.setInt32(" + std::to_string(off) + ", d." + dp.var->name + ", true);\n";
      off += 4;
    }
    for (const auto& v : k.scalars) {
      const bool is_int = v->type.is_int();
      s += "  view." + std::string(is_int ? "setInt32" : "setFloat32") + "(" + std::to_string(off) +
           ", s_" + v->name + ", true);\n";
      off += 4;
    }
    s += "  return dispatch(fn, device, v, tensors, params, v.grid(d));\n}\n";
  }
  return s;
}

std::string emit_js_types(const WgslLibrary& lib) {
  std::string s = "// TypeScript declarations of " + js_module_file_name(lib.name) +
                  " (WebGPU types: @webgpu/types or a TypeScript lib that has them).\n\n";
  s += "export declare class TilegenError extends Error {\n"
       "  readonly status: 'invalid-argument' | 'unsupported-shape' | 'no-variant';\n}\n\n";
  s += "/** What a call dispatched (or, for an empty problem, would have). folded: a grid extent\n"
       " *  was over the device's maxComputeWorkgroupsPerDimension, so `workgroups` holds the\n"
       " *  grid's workgroups renumbered (docs/wgsl.md). */\n"
       "export interface TilegenDispatch {\n  variant: string;\n  target: string;\n"
       "  workgroups: [number, number, number];\n  dispatched: boolean;\n  folded: boolean;\n}\n";
  for (const auto& ki : lib.kernels) {
    const Kernel& k = *ki.kernel;
    s += "\n/** " + k.name + (k.summary.empty() ? "" : ": " + js_comment(k.summary)) + " */\n";
    s += "export declare function " + public_function_name(lib.name, k) + "(device: GPUDevice, args: {\n";
    for (const auto& t : k.tensors)
      s += "  /** " + shape_text(t) + ", " + access_name(t->access) + " */\n  " + t->name + ": GPUBuffer;\n";
    for (const auto& d : k.dims)
      s += "  " + d.var->name + ": number;\n";
    for (const auto& v : k.scalars)
      s += "  /** " + std::string(v->type.name()) + " */\n  " + v->name + ": " + ts_type(v->type) + ";\n";
    for (const auto& f : k.flags)
      s += "  " + f->name + "?: boolean | 0 | 1;\n";
    s += "}): Promise<TilegenDispatch>;\n";
  }
  return s;
}

std::string emit_wgsl_manifest(const WgslLibrary& lib) {
  std::string s = "{\n  \"generated\": " + quote("@generated by tilegen for library '" + lib.name + "'. Do not edit: regenerate from the specs.") + ",\n";
  s += "  \"library\": " + quote(lib.name) + ",\n  \"module\": " + quote(js_module_file_name(lib.name)) + ",\n";
  s += "  \"params_layout\": \"binding 0: a uniform struct of every dim (i32), then every scalar (f32 or i32), 4 bytes each, in spec order, size rounded up to 16 bytes\",\n";
  s += "  \"functions\": [";
  for (size_t ki = 0; ki < lib.kernels.size(); ++ki) {
    const auto& kinfo = lib.kernels[ki];
    const Kernel& k = *kinfo.kernel;
    s += std::string(ki ? "," : "") + "\n    {\n      \"function\": " + quote(public_function_name(lib.name, k)) +
         ",\n      \"kernel\": " + quote(k.name) + ",\n      \"spec\": " + quote(kinfo.spec_path) + ",\n      \"types\": {";
    for (size_t i = 0; i < k.type_binding.size(); ++i)
      s += (i ? ", " : "") + quote(k.type_binding[i].first) + ": " + quote(k.type_binding[i].second.name());
    s += "},\n      \"dims\": [";
    for (size_t i = 0; i < k.dims.size(); ++i) {
      const auto& d = k.dims[i];
      s += std::string(i ? ", " : "") + "{\"name\": " + quote(d.var->name);
      if (!d.values.empty()) {
        std::vector<std::string> vals;
        for (auto v : d.values)
          vals.push_back(std::to_string(v));
        s += ", \"values\": " + list(vals, false);
      }
      if (d.min)
        s += ", \"min\": " + std::to_string(*d.min);
      if (d.max)
        s += ", \"max\": " + std::to_string(*d.max);
      if (d.multiple_of)
        s += ", \"multiple_of\": " + std::to_string(*d.multiple_of);
      s += "}";
    }
    s += "],\n      \"scalars\": [";
    for (size_t i = 0; i < k.scalars.size(); ++i)
      s += std::string(i ? ", " : "") + "{\"name\": " + quote(k.scalars[i]->name) + ", \"type\": " +
           quote(k.scalars[i]->type.is_unsigned() ? "u32" : k.scalars[i]->type.is_int() ? "i32" : "f32") + "}";
    s += "],\n      \"flags\": [";
    for (size_t i = 0; i < k.flags.size(); ++i)
      s += std::string(i ? ", " : "") + quote(k.flags[i]->name);
    s += "],\n      \"tensors\": [";
    for (size_t i = 0; i < k.tensors.size(); ++i) {
      const auto& t = k.tensors[i];
      std::vector<std::string> shape;
      for (const auto& e : t->shape)
        shape.push_back(to_string(e));
      s += std::string(i ? "," : "") + "\n        {\"name\": " + quote(t->name) + ", \"binding\": " + std::to_string(i + 1) +
           ", \"dtype\": " + quote(t->dtype.name()) + ", \"shape\": " + list(shape, true) +
           ", \"access\": " + quote(access_name(t->access)) + "}";
    }
    s += "\n      ],\n      \"variants\": [";
    for (size_t vi = 0; vi < kinfo.variants.size(); ++vi) {
      const auto& v = kinfo.variants[vi];
      std::vector<std::string> grid;
      for (const auto& g : v.grid)
        grid.push_back(to_string(simplify(g)));
      std::string values;
      for (const auto& [n, val] : v.instance.values)
        values += (values.empty() ? "" : ", ") + quote(n) + ": " + std::to_string(val);
      std::vector<std::string> elems;
      for (size_t i = 0; i < v.layout.element_types.size(); ++i)
        elems.push_back("array<" + v.layout.element_types[i] + ">" + (v.layout.packed[i] ? " packed" : ""));
      s += std::string(vi ? "," : "") + "\n        {\"instance\": " + quote(v.instance.name) + ", \"values\": {" + values +
           "}, \"target\": " + quote(v.target->name) + ", \"preference\": " + std::to_string(v.target->preference) +
           ",\n         \"file\": " + quote(v.file) + ", \"entry_point\": " + quote(v.entry_point) +
           ", \"workgroup_size\": [" + std::to_string(v.layout.threads) + ", 1, 1], \"workgroup_bytes\": " +
           std::to_string(v.layout.workgroup_bytes) + ",\n         \"features\": " + list(v.target->runtime_features, true) +
           ", \"grid\": " + list(grid, true) + ",\n         \"bindings\": " + list(v.layout.binding_types, true) +
           ", \"storage\": " + list(elems, true) + "}";
    }
    s += "\n      ]\n    }";
  }
  s += "\n  ]\n}\n";
  return s;
}

} // namespace tilegen::dispatch
