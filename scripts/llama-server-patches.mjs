// Hangar's changes to llama.cpp's server (scripts/build-llama-server.mjs applies them).
// Each one replaces exactly one text in one file, or the build stops: a new llama.cpp that
// moved the text must fail loudly, never build an unpatched server.

/**
 * Our changes to llama.cpp's server, each applied to exactly one place or the build
 * stops. First: it parses every answer with the model's chat format and answers 500
 * when the text does not follow it ("The model produced output that does not match
 * the expected ... format"). Hangar parses tool calls and reasoning itself, from the
 * raw text, so the text is given back as content instead.
 */
export const PATCHES = [
  {
    file: 'common/chat.cpp',
    find: 'throw std::runtime_error(std::string("The model produced output that does not match the expected ") + common_chat_format_name(params.format) + " format");',
    replace: '{ common_chat_msg raw; raw.role = "assistant"; raw.content = effective_input; return raw; } // hangar: raw text, parsed by the runtime',
  },
  {
    // A streamed token whose text ends inside a UTF-8 character was not sent at all (its
    // text goes out with a later one), so a client that reads token ids lost it: the
    // runtime decodes the ids itself and must see every one.
    file: 'tools/server/server-context.cpp',
    find: '        if (incomplete) {\n            slot.has_next_token = true;\n        }',
    replace:
      '        if (incomplete) {\n            slot.has_next_token = true;\n' +
      '            // hangar: the token goes out now, with no text yet (the runtime decodes the ids)\n' +
      '            result.text_to_send = "";\n            slot.add_token(result);\n' +
      '            if (slot.task->params.stream) {\n                send_partial_response(slot, result, false);\n            }\n        }',
  },
];

/**
 * Changes for the engine process only, not the --from-source baseline (which is
 * llama-server as a user builds it). First, the cost of work the runtime does itself:
 * llama-server parses the text generated so far with the model's chat format on every
 * streamed token, for `/completion` too, whose answers never carry the parse: the whole
 * text again per token (and, when the text does not follow the format, a warning line
 * with all of it on stderr, which the runtime then read). The runtime asks
 * `/completion` only and parses tool calls and reasoning itself, so the server skips
 * the parse for it. Then, each with its reason below: the server ends with its runtime;
 * a result wakes only the thread waiting for its task; and the server keeps the relay's
 * pace itself (docs/decisions.md, "llama.cpp: one wake-up per result in llama-server").
 */
export const ENGINE_PATCHES = [
  {
    file: 'tools/server/server-task.cpp',
    find: '    if (is_begin) {\n        return; // begin marker only flushes headers, skip parsing\n    }\n    state.update_chat_msg(content, true, oaicompat_msg_diffs);',
    replace:
      '    if (is_begin) {\n        return; // begin marker only flushes headers, skip parsing\n    }\n' +
      '    if (res_type == TASK_RESPONSE_TYPE_NONE) {\n        return; // hangar: /completion answers carry no parsed message\n    }\n' +
      '    state.update_chat_msg(content, true, oaicompat_msg_diffs);',
  },
  {
    file: 'tools/server/server-task.h',
    find: '        is_updated = true;\n        oaicompat_msg = state.update_chat_msg(content, false, oaicompat_msg_diffs);',
    replace:
      '        is_updated = true;\n' +
      '        if (res_type == TASK_RESPONSE_TYPE_NONE) {\n            return; // hangar: /completion answers carry no parsed message\n        }\n' +
      '        oaicompat_msg = state.update_chat_msg(content, false, oaicompat_msg_diffs);',
  },
  {
    // The server ends with its runtime, however the runtime ends: a runtime killed by a
    // signal runs no exit handler, and if the control plane died with it nobody would
    // kill the group; the kernel's parent-death signal always comes. The runtime names
    // itself in HANGAR_LLAMA_SERVER_PARENT; a server whose parent is already another
    // process (the runtime died before this line) exits at once.
    file: 'tools/server/main.cpp',
    find: 'int main(int argc, char ** argv) {\n    return llama_server(argc, argv);\n}',
    replace: [
      '#ifdef __linux__',
      '#include <csignal>',
      '#include <cstdlib>',
      '#include <sys/prctl.h>',
      '#include <unistd.h>',
      '#endif',
      '',
      'int main(int argc, char ** argv) {',
      '#ifdef __linux__',
      '    // hangar: end with the runtime that started this server (scripts/build-llama-server.mjs)',
      '    if (const char * parent = std::getenv("HANGAR_LLAMA_SERVER_PARENT")) {',
      '        prctl(PR_SET_PDEATHSIG, SIGKILL);',
      '        if (getppid() != (pid_t) std::atol(parent)) {',
      '            return 1;',
      '        }',
      '    }',
      '#endif',
      '    return llama_server(argc, argv);',
      '}',
    ].join('\n'),
  },
  // Each result woke every HTTP thread waiting for any result (one condition, notify_all):
  // with 8 streams, 64 thread wake-ups and as many lock handovers per decoding step, on
  // the cores ggml's threads compute on. A caller of recv_with_timeout() (every stream and
  // every non-streamed answer) now waits on a condition of its own, and a result wakes
  // only the caller waiting for its task. recv() callers keep the shared condition;
  // notifying a condition nobody waits on makes no system call.
  {
    file: 'tools/server/server-queue.h',
    find: '    std::mutex mutex_results;\n    std::condition_variable condition_results;\n\npublic:',
    replace: [
      '    std::mutex mutex_results;',
      '    std::condition_variable condition_results;',
      '',
      '    // hangar: one condition per recv_with_timeout() caller (scripts/llama-server-patches.mjs)',
      '    struct result_waiter {',
      '        const std::unordered_set<int> * id_tasks;',
      '        std::condition_variable cv;',
      '        bool finals_only = false; // a paced stream between two ticks',
      '    };',
      '    std::vector<result_waiter *> result_waiters;',
      '',
      'public:',
      '    // hangar: a paced stream\'s thread sleeps to the next tick of the pace\'s grid unless',
      '    // one of its results is queued already or a final one (an end, an error) comes',
      '    void wait_paced(const std::unordered_set<int> & id_tasks, int pace_ms);',
      '',
    ].join('\n'),
  },
  {
    file: 'tools/server/server-queue.cpp',
    find: [
      'server_task_result_ptr server_response::recv_with_timeout(const std::unordered_set<int> & id_tasks, int timeout) {',
      '    while (true) {',
      '        std::unique_lock<std::mutex> lock(mutex_results);',
    ].join('\n'),
    replace: [
      'server_task_result_ptr server_response::recv_with_timeout(const std::unordered_set<int> & id_tasks, int timeout) {',
      '    // hangar: wait on a condition of this caller\'s own, woken only for its tasks',
      '    result_waiter waiter;',
      '    waiter.id_tasks = &id_tasks;',
      '    std::unique_lock<std::mutex> lock(mutex_results);',
      '    result_waiters.push_back(&waiter);',
      '    struct unregister {',
      '        std::vector<result_waiter *> & list;',
      '        result_waiter * self;',
      '        ~unregister() { list.erase(std::find(list.begin(), list.end(), self)); }',
      '    } registered{result_waiters, &waiter};',
      '    while (true) {',
    ].join('\n'),
  },
  {
    file: 'tools/server/server-queue.cpp',
    find: '        std::cv_status cr_res = condition_results.wait_for(lock, std::chrono::seconds(timeout));',
    replace: '        std::cv_status cr_res = waiter.cv.wait_for(lock, std::chrono::seconds(timeout)); // hangar',
  },
  {
    file: 'tools/server/server-queue.cpp',
    find: '            queue_results.emplace_back(std::move(result));\n            condition_results.notify_all();\n            return;',
    replace: [
      '            const bool final_result = result->is_stop(); // hangar: an end or an error',
      '            queue_results.emplace_back(std::move(result));',
      '            // hangar: wake only the caller waiting for this task (a paced one only for a final result)',
      '            for (result_waiter * waiter : result_waiters) {',
      '                if (waiter->id_tasks->count(id_task) != 0 && (final_result || !waiter->finals_only)) {',
      '                    waiter->cv.notify_one();',
      '                }',
      '            }',
      '            condition_results.notify_all();',
      '            return;',
    ].join('\n'),
  },
  {
    file: 'tools/server/server-queue.cpp',
    find: '        queue_results.emplace_back(std::move(res_copy));\n    }\n    condition_results.notify_all();\n}',
    replace: [
      '        queue_results.emplace_back(std::move(res_copy));',
      '    }',
      '    for (result_waiter * waiter : result_waiters) {',
      '        waiter->cv.notify_one(); // hangar',
      '    }',
      '    condition_results.notify_all();',
      '}',
    ].join('\n'),
  },
  {
    file: 'tools/server/server-queue.cpp',
    find: 'void server_response::terminate() {\n    running = false;\n    condition_results.notify_all();\n}',
    replace: [
      'void server_response::terminate() {',
      '    std::unique_lock<std::mutex> lock(mutex_results); // hangar: the waiter list is read under the lock',
      '    running = false;',
      '    for (result_waiter * waiter : result_waiters) {',
      '        waiter->cv.notify_one();',
      '    }',
      '    condition_results.notify_all();',
      '}',
      '',
      'void server_response::wait_paced(const std::unordered_set<int> & id_tasks, int pace_ms) {',
      '    using clock = std::chrono::steady_clock;',
      '    const auto pace = std::chrono::milliseconds(pace_ms);',
      '    // one grid for every stream of the server: their writes come together',
      '    const auto tick = clock::time_point((clock::now().time_since_epoch() / pace + 1) * pace);',
      '    result_waiter waiter;',
      '    waiter.id_tasks = &id_tasks;',
      '    waiter.finals_only = true;',
      '    std::unique_lock<std::mutex> lock(mutex_results);',
      '    const auto queued = [&](bool finals) {',
      '        for (const auto & res : queue_results) {',
      '            if (id_tasks.count(res->id) != 0 && (!finals || res->is_stop())) {',
      '                return true;',
      '            }',
      '        }',
      '        return false;',
      '    };',
      '    if (queued(false)) {',
      '        return;',
      '    }',
      '    result_waiters.push_back(&waiter);',
      '    waiter.cv.wait_until(lock, tick, [&] { return !running || queued(true); });',
      '    result_waiters.erase(std::find(result_waiters.begin(), result_waiters.end(), &waiter));',
      '}',
    ].join('\n'),
  },
  // The stream's pace (docs/decisions.md, "llama.cpp: the relay's pace"): with
  // HANGAR_STREAM_PACE_MS set (the runtime sets its relay pace), a stream's thread
  // writes its first token at once, then sleeps to the next tick of a grid shared by all
  // streams and writes what came meanwhile; an end or an error wakes it at once. The
  // streamed answer says so in a header, so that the runtime reads it without pausing.
  {
    file: 'tools/server/server-queue.h',
    find: '#include <unordered_set>\n\n// struct for managing server tasks',
    replace: [
      '#include <unordered_set>',
      '#include <cstdlib>',
      '',
      '// hangar: the stream pace the runtime asks for, in ms (0: none)',
      'inline int hangar_stream_pace_ms() {',
      '    static const int ms = [] {',
      '        const char * value = std::getenv("HANGAR_STREAM_PACE_MS");',
      '        const int n = value ? std::atoi(value) : 0;',
      '        return n > 0 && n <= 1000 ? n : 0;',
      '    }();',
      '    return ms;',
      '}',
      '',
      '// struct for managing server tasks',
    ].join('\n'),
  },
  {
    file: 'tools/server/server-context.cpp',
    find: '                // receive subsequent results\n                bool timeout = false;',
    replace: [
      '                if (hangar_stream_pace_ms() > 0) {',
      '                    // hangar: the first token (the result after the begin marker) goes at once',
      '                    if (hangar_paced) {',
      '                        rd.queue_results.wait_paced(rd.id_tasks, hangar_stream_pace_ms());',
      '                    }',
      '                    hangar_paced = true;',
      '                }',
      '',
      '                // receive subsequent results',
      '                bool timeout = false;',
    ].join('\n'),
  },
  {
    file: 'tools/server/server-context.cpp',
    find: '        res->status = 200;\n        res->content_type = "text/event-stream";\n        res->set_next([res_this = res.get(), res_type, sse_ping_interval](std::string & output) -> bool {',
    replace: [
      '        res->status = 200;',
      '        res->content_type = "text/event-stream";',
      '        if (hangar_stream_pace_ms() > 0) {',
      '            res->headers["X-Hangar-Stream-Pace"] = std::to_string(hangar_stream_pace_ms()); // hangar',
      '        }',
      '        res->set_next([res_this = res.get(), res_type, sse_ping_interval, hangar_paced = false](std::string & output) mutable -> bool {',
    ].join('\n'),
  },
];

/**
 * Changes for the --from-source baseline only (bench/llamacpp.ts), never the engine
 * process. ggml's AMX kernels fill the tile configuration in a local and hand its
 * address to `_tile_loadconfig`; GCC 12 (Debian 12's) does not see the intrinsic read
 * it and drops every store but the palette's, so on a CPU with AMX (Sapphire Rapids
 * and later) the first tile instruction of a matrix product meets unconfigured tiles
 * and the server dies of SIGILL while it loads the model (upstream's fix is pending:
 * ggml-org/llama.cpp#26954). The escape below makes the stores happen; the engine's
 * own build links node-llama-cpp's prebuilt libraries, whose AMX code is sound.
 */
export const SOURCE_PATCHES = [
  {
    file: 'ggml/src/ggml-cpu/amx/mmq.cpp',
    find: '    _tile_loadconfig(&tc);\n    done = true;',
    replace:
      '    asm volatile("" : : "r"(&tc) : "memory"); // hangar: keep the stores above (GCC 12 drops them)\n' +
      '    _tile_loadconfig(&tc);\n    done = true;',
  },
];
