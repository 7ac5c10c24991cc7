/* The module tests/apps/loader_churn loads and unloads: something for the loader to map. */
int loader_churn_module_answer(void) {
  return 42;
}
