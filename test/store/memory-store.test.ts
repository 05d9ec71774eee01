import { memoryStore } from "../../src/store/memory-store.js";
import { storeContract } from "./contract.js";

storeContract("memoryStore", () => memoryStore());
