"""BibTeX of the tiny benchmarks' sources (and of tinyBenchmarks itself), for the cards."""

__all__ = [
    "POLO2024_BIBTEX", "MMLU_BIBTEX", "ARC_BIBTEX", "HELLASWAG_BIBTEX", "WINOGRANDE_BIBTEX", "TRUTHFULQA_BIBTEX",
    "GSM8K_BIBTEX", "ALPACA_EVAL_BIBTEX", "HELM_BIBTEX", "OPEN_LLM_LEADERBOARD_BIBTEX",
    "OPEN_LLM_LEADERBOARD_V2_BIBTEX", "IFEVAL_BIBTEX", "BBH_BIBTEX", "MATH_BIBTEX", "GPQA_BIBTEX", "MUSR_BIBTEX",
    "MMLU_PRO_BIBTEX",
]

POLO2024_BIBTEX = """@article{polo2024tinybenchmarks,
  title={tinyBenchmarks: evaluating LLMs with fewer examples},
  author={Maia Polo, Felipe and Weber, Lucas and Choshen, Leshem and Sun, Yuekai and Xu, Gongjun and Yurochkin, Mikhail},
  journal={arXiv preprint arXiv:2402.14992},
  year={2024}
}"""

MMLU_BIBTEX = """@article{hendryckstest2021,
  title={Measuring Massive Multitask Language Understanding},
  author={Dan Hendrycks and Collin Burns and Steven Basart and Andy Zou and Mantas Mazeika and Dawn Song and Jacob Steinhardt},
  journal={Proceedings of the International Conference on Learning Representations (ICLR)},
  year={2021}
}"""

ARC_BIBTEX = """@article{allenai:arc,
  author={Peter Clark and Isaac Cowhey and Oren Etzioni and Tushar Khot and Ashish Sabharwal and Carissa Schoenick and Oyvind Tafjord},
  title={Think you have Solved Question Answering? Try ARC, the AI2 Reasoning Challenge},
  journal={arXiv:1803.05457v1},
  year={2018}
}"""

HELLASWAG_BIBTEX = """@inproceedings{zellers2019hellaswag,
  title={HellaSwag: Can a Machine Really Finish Your Sentence?},
  author={Zellers, Rowan and Holtzman, Ari and Bisk, Yonatan and Farhadi, Ali and Choi, Yejin},
  booktitle={Proceedings of the 57th Annual Meeting of the Association for Computational Linguistics},
  year={2019}
}"""

WINOGRANDE_BIBTEX = """@article{sakaguchi2019winogrande,
  title={WinoGrande: An Adversarial Winograd Schema Challenge at Scale},
  author={Sakaguchi, Keisuke and Bras, Ronan Le and Bhagavatula, Chandra and Choi, Yejin},
  journal={arXiv preprint arXiv:1907.10641},
  year={2019}
}"""

TRUTHFULQA_BIBTEX = """@misc{lin2021truthfulqa,
  title={TruthfulQA: Measuring How Models Mimic Human Falsehoods},
  author={Stephanie Lin and Jacob Hilton and Owain Evans},
  year={2021},
  eprint={2109.07958},
  archivePrefix={arXiv},
  primaryClass={cs.CL}
}"""

GSM8K_BIBTEX = """@misc{cobbe2021training,
  title={Training Verifiers to Solve Math Word Problems},
  author={Karl Cobbe and Vineet Kosaraju and Mohammad Bavarian and Jacob Hilton and Reiichiro Nakano and Christopher Hesse and John Schulman},
  year={2021},
  eprint={2110.14168},
  archivePrefix={arXiv},
  primaryClass={cs.LG}
}"""

ALPACA_EVAL_BIBTEX = """@misc{alpaca_eval,
  author = {Xuechen Li and Tianyi Zhang and Yann Dubois and Rohan Taori and Ishaan Gulrajani and Carlos Guestrin and Percy Liang and Tatsunori B. Hashimoto},
  title = {AlpacaEval: An Automatic Evaluator of Instruction-following Models},
  year = {2023},
  publisher = {GitHub},
  howpublished = {\\url{https://github.com/tatsu-lab/alpaca_eval}}
}"""

HELM_BIBTEX = """@article{liang2023holistic,
  title={Holistic Evaluation of Language Models},
  author={Liang, Percy and Bommasani, Rishi and Lee, Tony and Tsipras, Dimitris and Soylu, Dilara and Yasunaga, Michihiro and Zhang, Yian and Narayanan, Deepak and Wu, Yuhuai and Kumar, Ananya and others},
  journal={Transactions on Machine Learning Research},
  year={2023}
}
@misc{helmlite2023,
  title={HELM Lite: Lightweight and Broad Capabilities Evaluation},
  author={Liang, Percy and Mai, Yifan and Somerville, Josselin and Kaiyom, Farzaan and Lee, Tony and Bommasani, Rishi},
  year={2023},
  howpublished={\\url{https://crfm.stanford.edu/2023/12/19/helm-lite.html}}
}"""

OPEN_LLM_LEADERBOARD_BIBTEX = """@misc{open-llm-leaderboard,
  author={Edward Beeching and Cl{\\'e}mentine Fourrier and Nathan Habib and Sheon Han and Nathan Lambert and Nazneen Rajani and Omar Sanseviero and Lewis Tunstall and Thomas Wolf},
  title={Open LLM Leaderboard},
  year={2023},
  publisher={Hugging Face},
  howpublished={\\url{https://huggingface.co/spaces/open-llm-leaderboard-old/open_llm_leaderboard}}
}"""

OPEN_LLM_LEADERBOARD_V2_BIBTEX = """@misc{open-llm-leaderboard-v2,
  author={Cl{\\'e}mentine Fourrier and Nathan Habib and Alina Lozovskaya and Konrad Szafer and Thomas Wolf},
  title={Open LLM Leaderboard v2},
  year={2024},
  publisher={Hugging Face},
  howpublished={\\url{https://huggingface.co/spaces/open-llm-leaderboard/open_llm_leaderboard}}
}"""

IFEVAL_BIBTEX = """@misc{zhou2023instructionfollowingevaluationlargelanguage,
  title={Instruction-Following Evaluation for Large Language Models},
  author={Jeffrey Zhou and Tianjian Lu and Swaroop Mishra and Siddhartha Brahma and Sujoy Basu and Yi Luan and Denny Zhou and Le Hou},
  year={2023},
  eprint={2311.07911},
  archivePrefix={arXiv}
}"""

BBH_BIBTEX = """@article{suzgun2022challenging,
  title={Challenging BIG-Bench Tasks and Whether Chain-of-Thought Can Solve Them},
  author={Suzgun, Mirac and Scales, Nathan and Sch{\\"a}rli, Nathanael and Gehrmann, Sebastian and Tay, Yi and Chung, Hyung Won and Chowdhery, Aakanksha and Le, Quoc V and Chi, Ed H and Zhou, Denny and Wei, Jason},
  journal={arXiv preprint arXiv:2210.09261},
  year={2022}
}"""

MATH_BIBTEX = """@article{hendrycksmath2021,
  title={Measuring Mathematical Problem Solving With the MATH Dataset},
  author={Dan Hendrycks and Collin Burns and Saurav Kadavath and Akul Arora and Steven Basart and Eric Tang and Dawn Song and Jacob Steinhardt},
  journal={NeurIPS},
  year={2021}
}"""

GPQA_BIBTEX = """@misc{rein2023gpqagraduatelevelgoogleproofqa,
  title={GPQA: A Graduate-Level Google-Proof Q&A Benchmark},
  author={David Rein and Betty Li Hou and Asa Cooper Stickland and Jackson Petty and Richard Yuanzhe Pang and Julien Dirani and Julian Michael and Samuel R. Bowman},
  year={2023},
  eprint={2311.12022},
  archivePrefix={arXiv}
}"""

MUSR_BIBTEX = """@misc{sprague2024musrtestinglimitschainofthought,
  title={MuSR: Testing the Limits of Chain-of-thought with Multistep Soft Reasoning},
  author={Zayne Sprague and Xi Ye and Kaj Bostrom and Swarat Chaudhuri and Greg Durrett},
  year={2024},
  eprint={2310.16049},
  archivePrefix={arXiv}
}"""

MMLU_PRO_BIBTEX = """@misc{wang2024mmluprorobustchallengingmultitask,
  title={MMLU-Pro: A More Robust and Challenging Multi-Task Language Understanding Benchmark},
  author={Yubo Wang and Xueguang Ma and Ge Zhang and Yuansheng Ni and Abhranil Chandra and Shiguang Guo and Weiming Ren and Aaran Arulraj and Xuan He and Ziyan Jiang and Tianle Li and Max Ku and Kai Wang and Alex Zhuang and Rongqi Fan and Xiang Yue and Wenhu Chen},
  year={2024},
  eprint={2406.01574},
  archivePrefix={arXiv}
}"""
