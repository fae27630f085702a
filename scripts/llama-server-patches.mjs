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
 * the parse for it. Second, the server ends with its runtime (below).
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
      '    };',
      '    std::vector<result_waiter *> result_waiters;',
      '',
      'public:',
    ].join('\n'),
  },
  {
    file: 'tools/server/server-queue.cpp',
    find: [
      'server_task_result_ptr server_response::recv_with_timeout(const std::unordered_set<int> & id_tasks, int timeout) {',
      '    while (true) {',
      '        std::unique_lock<std::mutex> lock(mutex_results);',
      '',
      '        for (int i = 0; i < (int) queue_results.size(); i++) {',
      '            if (id_tasks.find(queue_results[i]->id) != id_tasks.end()) {',
      '                server_task_result_ptr res = std::move(queue_results[i]);',
      '                queue_results.erase(queue_results.begin() + i);',
      '                return res;',
      '            }',
      '        }',
      '',
      '        std::cv_status cr_res = condition_results.wait_for(lock, std::chrono::seconds(timeout));',
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
      '        for (int i = 0; i < (int) queue_results.size(); i++) {',
      '            if (id_tasks.find(queue_results[i]->id) != id_tasks.end()) {',
      '                server_task_result_ptr res = std::move(queue_results[i]);',
      '                queue_results.erase(queue_results.begin() + i);',
      '                return res;',
      '            }',
      '        }',
      '',
      '        std::cv_status cr_res = waiter.cv.wait_for(lock, std::chrono::seconds(timeout));',
    ].join('\n'),
  },
  {
    file: 'tools/server/server-queue.cpp',
    find: '            queue_results.emplace_back(std::move(result));\n            condition_results.notify_all();\n            return;',
    replace: [
      '            queue_results.emplace_back(std::move(result));',
      '            // hangar: wake only the caller waiting for this task',
      '            for (result_waiter * waiter : result_waiters) {',
      '                if (waiter->id_tasks->count(id_task) != 0) {',
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
    ].join('\n'),
  },
];
