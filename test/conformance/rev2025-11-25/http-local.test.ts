import { conformanceSuites } from "./all.suite.js";
import { PATHS } from "./paths.js";

conformanceSuites(PATHS["http-local"]);
