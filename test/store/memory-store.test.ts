import { memoryStore } from "../../src/store/memory/memory-store.js";
import { storeContract } from "./contract.js";

storeContract("memoryStore", () => memoryStore());
