/* The provider plugin ABI: how Switchyard and a provider library built
 * apart from it talk (DESIGN.md, "The provider interface").
 *
 * Plain C, so that a provider may be built with another compiler or
 * standard library than the core, and needs only this header. Two tables of
 * function pointers cross the boundary:
 *
 *   sy_host_api      what the core offers the plugin: questions about a
 *                    node while it is being claimed, and a kernel's inputs,
 *                    outputs and scratch memory while it runs;
 *   sy_provider_api  what the plugin offers the core: availability, device
 *                    memory, copies, whether it can run a node, the
 *                    rewrites it takes, creating a kernel for a node placed
 *                    on it, running that kernel.
 *
 * A session asks supports() for every node the providers ahead declined,
 * places the nodes, runs each provider's rewrites (fusions) on the nodes
 * placed on it, and only then calls create_kernel(), once per node kept.
 *
 * A plugin exports one symbol, sy_provider_get_api. The core refuses a
 * table whose abi_version differs from SY_PROVIDER_ABI_VERSION; entries
 * marked "optional" may be null. Errors travel as an int status (0 ok,
 * else an sy_status_code) plus a message written into a caller-owned
 * buffer; no C++ exception crosses the boundary.
 *
 * Every object is opaque to the other side: the core owns sy_node and
 * sy_kernel_context, the plugin owns sy_provider, sy_kernel and sy_stream
 * contents. Device, stream and buffer are separate: a buffer is a pointer
 * plus the sy_device it lives on; the plugin keeps its own streams.
 */
#ifndef SWITCHYARD_PROVIDER_ABI_H_
#define SWITCHYARD_PROVIDER_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SY_PROVIDER_ABI_VERSION 4

/* Status codes; the same numbers as sy::StatusCode. */
enum {
  SY_STATUS_OK = 0,
  SY_STATUS_FAIL = 1,
  SY_STATUS_INVALID_ARGUMENT = 2,
  SY_STATUS_INVALID_GRAPH = 5,
  SY_STATUS_NOT_IMPLEMENTED = 6,
  SY_STATUS_RUNTIME_ERROR = 7,
  SY_STATUS_UNAVAILABLE = 8,
  SY_STATUS_OUT_OF_MEMORY = 9,
};

/* sy::DeviceType values. */
enum { SY_DEVICE_CPU = 0, SY_DEVICE_CUDA = 1, SY_DEVICE_ROCM = 2, SY_DEVICE_SIMULATED = 99 };

typedef struct sy_device {
  int32_t type;
  int32_t id;
} sy_device;

/* A tensor as both sides see it. dtype is ONNX's TensorProto.DataType.
 * In a type (sy_host_api.node_input_type) rank is -1 when unknown and a
 * dimension is -1 when unknown; data is then null. */
#define SY_MAX_RANK 8
typedef struct sy_tensor {
  int32_t dtype;
  int32_t rank;
  int64_t dims[SY_MAX_RANK];
  void* data;
  sy_device device;
} sy_tensor;

typedef struct sy_node sy_node;                     /* core-owned, valid during supports / create_kernel */
typedef struct sy_kernel_context sy_kernel_context; /* core-owned, valid during kernel_run */
typedef struct sy_partition sy_partition;           /* core-owned, valid during compile */
typedef struct sy_provider sy_provider;             /* plugin-owned */
typedef struct sy_kernel sy_kernel;                 /* plugin-owned */

/* Log levels, as sy::LogLevel. */
enum { SY_LOG_VERBOSE = 0, SY_LOG_INFO = 1, SY_LOG_WARNING = 2, SY_LOG_ERROR = 3 };

typedef struct sy_host_api {
  uint32_t abi_version; /* SY_PROVIDER_ABI_VERSION */
  uint32_t size;        /* sizeof(sy_host_api) */

  /* ---- a node being claimed ---- */
  const char* (*node_op_type)(const sy_node* node);
  const char* (*node_domain)(const sy_node* node); /* "" for ai.onnx */
  const char* (*node_name)(const sy_node* node);
  /* "node 'name' (OpType)", for messages. */
  const char* (*node_describe)(const sy_node* node);
  /* The version of the op's schema this node resolved to. */
  int32_t (*node_since_version)(const sy_node* node);
  /* Counts include omitted optional inputs/outputs. */
  int32_t (*node_num_inputs)(const sy_node* node);
  int32_t (*node_num_outputs)(const sy_node* node);
  /* 1 and the static type when input i is given and is a tensor, else 0. */
  int (*node_input_type)(const sy_node* node, int32_t i, sy_tensor* type);
  int (*node_output_type)(const sy_node* node, int32_t i, sy_tensor* type);
  /* 1 and the value (host memory, valid for the session's life) when input
   * i is a constant, else 0. For prepacking weights at creation. */
  int (*node_constant_input)(const sy_node* node, int32_t i, sy_tensor* value);
  /* Attributes: 1 and the value when present with that type, else 0. Array
   * and string pointers stay valid for the session's life. */
  int (*node_attr_int)(const sy_node* node, const char* name, int64_t* value);
  int (*node_attr_float)(const sy_node* node, const char* name, float* value);
  int (*node_attr_ints)(const sy_node* node, const char* name, const int64_t** values, size_t* count);
  int (*node_attr_floats)(const sy_node* node, const char* name, const float** values, size_t* count);
  int (*node_attr_string)(const sy_node* node, const char* name, const char** value, size_t* size);
  int (*node_attr_tensor)(const sy_node* node, const char* name, sy_tensor* value);
  /* A fingerprint of the model the node belongs to (stable across
   * sessions on the same file), for caches kept on disk. */
  const char* (*node_model_key)(const sy_node* node);

  /* ---- a kernel running ---- */
  int32_t (*ctx_num_inputs)(sy_kernel_context* ctx);
  /* 1 and the tensor when input i is given, else 0. */
  int (*ctx_input)(sy_kernel_context* ctx, int32_t i, sy_tensor* tensor);
  int32_t (*ctx_num_outputs)(sy_kernel_context* ctx);
  /* 0 when output i is an omitted optional output (it may still be allocated). */
  int (*ctx_output_requested)(sy_kernel_context* ctx, int32_t i);
  /* Memory for output i on the provider's device; fills `tensor`. */
  int (*ctx_allocate_output)(sy_kernel_context* ctx, int32_t i, int32_t dtype, int32_t rank, const int64_t* dims,
                             sy_tensor* tensor, char* error, size_t error_size);
  /* Device scratch memory valid until the kernel returns; null on failure. */
  void* (*ctx_scratch)(sy_kernel_context* ctx, size_t bytes);

  /* ---- anywhere ---- */
  void (*log)(int level, const char* message);

  /* ---- since ABI 3 ---- */
  /* The name of a node's input or output value ("" when omitted): how a
   * compiled partition matches its nodes' values to its own inputs and
   * outputs. Valid for the session's life. */
  const char* (*node_input_name)(const sy_node* node, int32_t i);
  const char* (*node_output_name)(const sy_node* node, int32_t i);

  /* A partition being compiled: its nodes in execution order; its inputs
   * (values its nodes read from outside it, constants included) and its
   * outputs (values its nodes make that something outside reads), in the
   * order the compiled kernel sees them in its context. partition_input
   * gives the name and static type, and data when the input is a
   * constant (host memory, valid for the session's life). */
  int32_t (*partition_num_nodes)(const sy_partition* partition);
  const sy_node* (*partition_node)(const sy_partition* partition, int32_t i);
  int32_t (*partition_num_inputs)(const sy_partition* partition);
  int32_t (*partition_num_outputs)(const sy_partition* partition);
  int (*partition_input)(const sy_partition* partition, int32_t i, const char** name, sy_tensor* type);
  int (*partition_output)(const sy_partition* partition, int32_t i, const char** name, sy_tensor* type);

  /* ---- since ABI 4 ---- */
  /* What the kernel's kernel_prepare made for the current input shapes
   * (null when it made nothing, or the provider has no prepare phase).
   * Valid during kernel_run; the kernel only reads it, since a kernel's
   * own threads may share it. */
  void* (*ctx_state)(sy_kernel_context* ctx);
} sy_host_api;

/* One option a provider's create() accepts, and its values in words. */
typedef struct sy_option_spec {
  const char* key;      /* "device_id" */
  const char* accepted; /* "an integer >= 0" */
} sy_option_spec;

typedef struct sy_provider_api {
  uint32_t abi_version; /* SY_PROVIDER_ABI_VERSION */
  uint32_t size;        /* sizeof(sy_provider_api) */
  const char* name;       /* "CUDAExecutionProvider" */
  const char* short_name; /* "cuda" */

  /* Creates a provider for one session. Options are string pairs; an
   * unknown key or a bad value returns null with a message that lists what
   * is accepted. A provider that cannot run here (no device, missing
   * library) is still created and says why through availability(). */
  sy_provider* (*create)(const sy_host_api* host, const char* const* keys, const char* const* values, size_t count,
                         char* error, size_t error_size);
  void (*destroy)(sy_provider* provider);
  /* 1 when usable; else 0 with the reason and the fix. */
  int (*availability)(sy_provider* provider, char* reason, size_t reason_size, char* fix, size_t fix_size);
  sy_device (*device)(sy_provider* provider);

  /* Device memory. allocate returns null on failure and may explain why
   * through last_error (optional). */
  void* (*allocate)(sy_provider* provider, size_t bytes);
  void (*deallocate)(sy_provider* provider, void* pointer);
  /* optional: the message for the last failed allocate on this thread. */
  const char* (*last_error)(sy_provider* provider);

  /* Copies between device and host; dst has src's dtype and shape. */
  int (*copy_to_host)(sy_provider* provider, const sy_tensor* src, sy_tensor* dst, char* error, size_t error_size);
  int (*copy_from_host)(sy_provider* provider, const sy_tensor* src, sy_tensor* dst, char* error, size_t error_size);
  /* optional: a copy within the device (queued on the provider's stream). */
  int (*copy_on_device)(sy_provider* provider, const sy_tensor* src, sy_tensor* dst, char* error, size_t error_size);

  /* Creates the kernel of a node placed on this provider: returns 1 with a
   * kernel, and sets bit i of *host_inputs for each input the kernel reads
   * from host memory (shape arguments such as Reshape's); or 0 with the
   * reason it declines after all (the node then goes to the next provider). */
  int (*create_kernel)(sy_provider* provider, const sy_node* node, sy_kernel** kernel, uint64_t* host_inputs,
                       char* reason, size_t reason_size);
  /* Runs a kernel; may only queue work on the provider's stream. */
  int (*kernel_run)(sy_provider* provider, sy_kernel* kernel, sy_kernel_context* ctx, char* error, size_t error_size);
  void (*kernel_destroy)(sy_provider* provider, sy_kernel* kernel);

  /* optional: waits until all queued work is done (end of a run whose
   * outputs stay on the device). */
  int (*synchronize)(sy_provider* provider, char* error, size_t error_size);
  /* optional: facts for doctor and the session log (device name, memory,
   * driver and library versions), one per line. */
  int (*describe)(sy_provider* provider, char* text, size_t text_size);

  /* ---- since ABI 3 ---- */
  /* optional: 1 when the provider can run the node, else 0 with the reason.
   * Creates nothing; called at placement, before any rewrite. When null
   * the core asks create_kernel and destroys the kernel it gets, which
   * costs a kernel creation (weights prepacked) per node twice. */
  int (*supports)(sy_provider* provider, const sy_node* node, char* reason, size_t reason_size);
  /* optional: a null-terminated list of the core's provider rewrites whose
   * ops this provider's kernels run ("conv_residual", "conv_activation":
   * com.switchyard.FusedConv; "matmul_epilogue": FusedMatMul; "attention":
   * FusedAttention; "conv_blocked_layout": the CPU's NCHW16c FusedConv).
   * They run on the nodes placed on it. Null: none. An unknown name fails
   * session creation. */
  const char* const* rewrites;
  /* The provider's own version ("1.2.0"), part of compile()'s cache key. */
  const char* version;
  /* optional: one kernel for a whole partition, the nodes placed on this
   * provider that run one after another (the TensorRT pattern: build one
   * engine per partition). Called after the provider's rewrites, instead
   * of create_kernel for those nodes; 0 with a reason declines, and the
   * nodes then get a kernel each. cache_key names the model, the device,
   * the provider's version and the partition, for engines cached on disk.
   * The kernel runs through kernel_run with the partition's inputs and
   * outputs as its context's. */
  int (*compile)(sy_provider* provider, const sy_partition* partition, const char* cache_key, sy_kernel** kernel,
                 uint64_t* host_inputs, char* reason, size_t reason_size);
  /* optional: the options create() accepts, ended by {NULL, NULL}. doctor
   * lists them; the core keeps no copy (create() still checks them). */
  const sy_option_spec* options;
  /* optional: the shared libraries the provider opens at run time, one
   * entry per library with its accepted sonames separated by '|'
   * ("libcudnn.so.9|libcudnn.so.8"), ended by NULL. doctor lists them;
   * whether they were found is the provider's describe() to say. */
  const char* const* libraries;

  /* ---- since ABI 4 ---- */
  /* optional: the kernel's prepare phase, for work that depends on the
   * input shapes alone (choosing an algorithm, sizing a workspace). The
   * core calls it before kernel_run whenever the shapes of the node's
   * inputs differ from those of the last run in the same frame (a frame is
   * one run's memory; concurrent runs use different frames), and on the
   * first run. ctx gives the inputs; what it makes must depend on their
   * shapes alone, not their values, since it serves later inputs of the
   * same shapes (it may still run them, to time algorithms).
   * ctx_allocate_output and ctx_scratch fail in it: memory it needs for
   * itself comes from the provider's own allocator. Returns 0 and *state
   * (null allowed), or
   * a status code with the message in error. The core hands *state to
   * every kernel_run through ctx_state() until it destroys it with
   * kernel_state_destroy: when the shapes change or the frame goes. */
  int (*kernel_prepare)(sy_provider* provider, sy_kernel* kernel, sy_kernel_context* ctx, void** state, char* error,
                        size_t error_size);
  /* optional (required with kernel_prepare): frees a prepared state. */
  void (*kernel_state_destroy)(sy_provider* provider, sy_kernel* kernel, void* state);
} sy_provider_api;

/* The one symbol a provider library exports. host_abi_version is the
 * core's SY_PROVIDER_ABI_VERSION; a plugin that cannot serve it may return
 * null. */
typedef const sy_provider_api* (*sy_provider_get_api_fn)(uint32_t host_abi_version);
#define SY_PROVIDER_GET_API_SYMBOL "sy_provider_get_api"

#ifdef __cplusplus
}
#endif

#endif /* SWITCHYARD_PROVIDER_ABI_H_ */
