/** `lqb port`: a job class of the app moved to Node, as a typed handler module and a test that runs it on a payload the app made. */
export { portClass, sampleProps, type Middleware, type PortedClass } from './portClass.js';
