// The handlers module bench/lqb-vs-laravel.ts gives `lqb work`: the RecordJob bench/worker.ts pushes, doing nothing.
export default { 'App\\Jobs\\Bridge\\RecordJob': () => undefined };
