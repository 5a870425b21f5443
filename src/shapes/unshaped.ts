/**
 * A job dispatched by class name without its class shapes is written with every property
 * public: PHP's worker then finds the class's protected and private properties uninitialized.
 * Where the app is not at hand to read its shapes from, that is said once per class in a
 * process (not once per job: a service dispatches the same class all day), with what to do.
 */

/** The classes already said to be written without shapes in this process. */
const said = new Set<string>();

/** True the first time a class is written without shapes in this process, then false. */
export function firstUnshaped(className: string): boolean {
  if (said.has(className)) return false;
  said.add(className);
  return true;
}

/** How each caller names its ways to shapes: the CLI's flags or the library's options. */
export type UnshapedRemedies = 'cli' | 'library';

const REMEDIES: Record<UnshapedRemedies, string> = {
  cli: "give --shapes=FILE (lqb shapes --app=DIR writes it; or LQB_SHAPES), or --env=APP/.env beside the app's vendor/ and app/ with PHP on PATH; --strict-shapes refuses instead",
  library:
    "give shapes (lqb shapes --app=DIR writes them), or env beside the app's vendor/ and app/ with PHP on PATH; strictShapes refuses instead",
};

/** The one line: what could not be known of the class, what was written instead, and what to do. */
export function unshapedLine(className: string, remedies: UnshapedRemedies): string {
  return `${className} was written without its class shapes: whether its properties are protected or private (and their types and defaults) could not be known, so each is written public, and PHP's worker leaves a protected or private one uninitialized; ${REMEDIES[remedies]}`;
}
