/**
 * The one-way dependency direction of docs/architecture (shared/design/architecture.md):
 *   app -> api -> {auth, supervisor, registry};  supervisor -> {runtime, registry};
 *   everything -> leaves (config, errors, logging); leaves import nothing of ours;
 *   llama-runtime/ (a process of its own) -> runtime/'s wire code and the leaves only.
 * CI fails on any violation.
 */
const leaves = '^src/(config|errors|logging|storage)/';
module.exports = {
  forbidden: [
    {
      name: 'leaves-are-leaves',
      comment: 'config/, errors/, logging/ and storage/ may import only themselves.',
      severity: 'error',
      from: { path: '^src/(config|errors|logging|storage)/' },
      to: { path: '^src/', pathNot: ['^src/$1/', leaves] },
    },
    {
      name: 'runtime-knows-no-http',
      comment: 'runtime/ knows nothing of HTTP, auth, the registry or the supervisor.',
      severity: 'error',
      from: { path: '^src/runtime/' },
      to: { path: '^src/', pathNot: ['^src/runtime/', leaves] },
    },
    {
      name: 'registry-is-data',
      severity: 'error',
      from: { path: '^src/registry/' },
      to: { path: '^src/', pathNot: ['^src/registry/', leaves] },
    },
    {
      name: 'auth-is-standalone',
      severity: 'error',
      from: { path: '^src/auth/' },
      to: { path: '^src/', pathNot: ['^src/auth/', leaves] },
    },
    {
      name: 'supervisor-below-api',
      comment: 'supervisor/ may use runtime/ and registry/, never api/ or auth/.',
      severity: 'error',
      from: { path: '^src/supervisor/' },
      to: { path: '^src/', pathNot: ['^src/(supervisor|runtime|registry)/', leaves] },
    },
    {
      name: 'api-above-supervisor',
      comment: 'api/ uses auth/, supervisor/ and registry/, never runtime/ directly.',
      severity: 'error',
      from: { path: '^src/api/' },
      to: { path: '^src/', pathNot: ['^src/(api|auth|supervisor|registry)/', leaves] },
    },
    {
      name: 'only-app-imports-api',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/app\\.ts$', '^src/api/'] },
      to: { path: '^src/api/' },
    },
    {
      name: 'cli-is-a-client',
      comment: 'cli/ talks HTTP to a server; it imports no server parts.',
      severity: 'error',
      from: { path: '^src/cli/' },
      to: { path: '^src/', pathNot: ['^src/cli/', leaves] },
    },
    {
      name: 'llama-runtime-is-a-process',
      comment: 'The Node runtime (llama.cpp) is a process of its own: it shares the wire code of runtime/ (and the naming of its socket files), never the control plane\'s state, API or auth.',
      severity: 'error',
      from: { path: '^src/llama-runtime/' },
      to: { path: '^src/', pathNot: ['^src/llama-runtime/', '^src/runtime/(wire|socket-sender|well-formed-text|endpoints)\\.ts$', leaves] },
    },
    {
      name: 'nothing-imports-the-llama-runtime',
      comment: 'The control plane starts the Node runtime as a program; it never imports it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/llama-runtime/' },
      to: { path: '^src/llama-runtime/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
  },
};
