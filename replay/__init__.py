"""The 跑胡子 command line and its tools: hand calculator, simulator, recorder and replayer."""
